// The reviewer's page (/workflow/{id}/review?pt=): the participant's answers, the validation
// results, and the decision: approve, approve with an exception (the justification box), reject,
// or send back with change requests beside named fields.
import { ApiError, alertBox, api, call, el, endPage, say, show, t } from "./common.js";

const parts = location.pathname.split("/").filter(Boolean);
const id = decodeURIComponent(parts[parts.indexOf("workflow") + 1] || "");
const token = new URLSearchParams(location.search).get("pt") || "";
const route = (suffix) => api(`/workflow/${encodeURIComponent(id)}${suffix}?token=${encodeURIComponent(token)}`);

function failPage(e) {
  if (e.code === "reviewer_token_spent") return endPage("spent", t("review.spent.title"), t("review.spent.text"));
  if (e.status === 401) return endPage("invalid", t("sign.invalid.title"), t("review.invalid.text"));
  return endPage("error", t("common.error.title"), e.message);
}

async function start() {
  let p;
  try {
    p = (await call("GET", route(""))).data;
  } catch (e) {
    if (e instanceof ApiError) return failPage(e);
    throw e;
  }
  if (p.state !== "pending-approval") return endPage("closed", t("review.nothing.title"), t("review.nothing.text", { state: p.state.replace("-", " ") }));
  const fields = p.steps.flatMap((s) => s.fields.map((f) => ({ ...f, step: s })));
  const answers = el("section", { "aria-labelledby": "answers-title" }, el("h2", { id: "answers-title" }, t("review.answers")),
    ...p.steps.map((s) => el("div", {}, el("h3", {}, s.title || s.id), el("dl", { class: "meta" },
      ...s.fields.flatMap((f) => [el("dt", {}, f.label || f.key), el("dd", { "data-answer": f.key }, display(s.data[f.key]))])))));
  const failed = (p.validationResults || []).filter((r) => r.severity === "error" && !r.passed); // passed rules are listed too
  const results = failed.length ? el("section", { "aria-labelledby": "rules-title" }, el("h2", { id: "rules-title" }, t("review.failed")),
    el("ul", {}, ...failed.map((r) => el("li", {}, r.message)))) : null;
  show(el("h1", {}, p.title || t("page.title.review")),
    el("p", {}, p.totalApprovalStages ? t("review.stage", { stage: p.currentApprovalStage, total: p.totalApprovalStages }) : t("review.any")), answers, results, decisionForm(fields, failed.length > 0));
}

function display(v) {
  if (v === undefined || v === null || v === "") return "—";
  if (typeof v === "boolean") return t(v ? "review.yes" : "review.no");
  return String(v);
}

function changeItem(fields, n) {
  const fid = `change-${n}`;
  return el("fieldset", { class: "change-item", "data-item": n }, el("legend", {}, t("review.change", { n: n + 1 })),
    el("label", { for: `${fid}-field` }, t("review.aboutField")),
    el("select", { id: `${fid}-field`, name: "fieldKey" }, el("option", { value: "" }, t("review.wholeForm")),
      ...fields.map((f) => el("option", { value: f.key }, f.label || f.key))),
    el("label", { for: `${fid}-message` }, t("review.what")),
    el("textarea", { id: `${fid}-message`, name: "message", rows: "2", maxlength: "1000", required: true }),
    el("label", { for: `${fid}-severity` }, t("review.importance")),
    el("select", { id: `${fid}-severity`, name: "severity" }, el("option", { value: "error" }, t("review.must")),
      el("option", { value: "warning" }, t("review.should")), el("option", { value: "info" }, t("review.info"))));
}

function decisionForm(fields, rulesFailed) {
  const msg = alertBox("decision-message");
  const choices = [["approve", t("review.approve")], ["approve-with-exception", t("review.approveException")], ["request-changes", t("review.requestChanges")], ["reject", t("review.reject")]];
  const justification = el("textarea", { id: "justification", name: "justification", rows: "3", maxlength: "2000", "aria-describedby": "justification-help" });
  const justRow = el("div", { hidden: true }, el("label", { for: "justification" }, t("review.justification")),
    el("p", { id: "justification-help", class: "hint" }, t("review.justificationHelp")), justification);
  const items = el("div", { id: "change-items" }, changeItem(fields, 0));
  const changesRow = el("div", { hidden: true }, items,
    el("button", { type: "button", id: "change-add", onclick: () => items.append(changeItem(fields, items.children.length)) }, t("review.addChange")));
  let decision = rulesFailed ? "approve-with-exception" : "approve";
  const sync = () => {
    justRow.hidden = decision !== "approve-with-exception";
    changesRow.hidden = decision !== "request-changes";
  };
  const radios = el("fieldset", {}, el("legend", {}, t("review.decision")), ...choices.map(([v, label]) =>
    el("div", { class: "check" }, el("input", { type: "radio", name: "decision", id: `decision-${v}`, value: v, checked: v === decision,
      onchange: () => { decision = v; sync(); } }), el("label", { for: `decision-${v}` }, label))));
  sync();
  return el("form", { id: "decision-form", novalidate: true, "aria-labelledby": "decision-title", onsubmit: async (ev) => {
    ev.preventDefault();
    say(msg, "");
    try {
      if (decision === "request-changes") {
        const changes = [...items.children].map((it) => ({
          fieldKey: it.querySelector("[name=fieldKey]").value || undefined,
          message: it.querySelector("[name=message]").value.trim(),
          severity: it.querySelector("[name=severity]").value,
        }));
        const empty = changes.findIndex((c) => !c.message);
        if (empty >= 0) {
          say(msg, t("review.describe", { n: empty + 1 }));
          items.children[empty].querySelector("[name=message]").focus();
          return;
        }
        await call("POST", route("/request-changes"), { json: { changes } });
        return endPage("decided", t("review.sentBack.title"), t("review.sentBack.text"));
      }
      if (decision === "approve-with-exception" && !justification.value.trim()) {
        say(msg, t("review.writeJustification"));
        justification.setAttribute("aria-invalid", "true");
        justification.focus();
        return;
      }
      await call("POST", route("/governance-decision"), { json: { decision, justification: decision === "approve-with-exception" ? justification.value.trim() : "" } });
      endPage("decided", t(decision === "reject" ? "review.rejected" : "review.approved"), t("review.recorded"));
    } catch (e) {
      if (e instanceof ApiError && (e.code === "reviewer_token_spent" || e.status === 401)) return failPage(e);
      const f = e instanceof ApiError ? (e.problem.errors || [])[0] : null;
      say(msg, f ? `${f.field}: ${f.message}` : e.message);
    }
  } }, el("h2", { id: "decision-title" }, t("review.decisionTitle")), radios, justRow, changesRow, msg,
  el("button", { type: "submit", id: "decision-submit", class: "primary" }, t("review.submit")));
}

start().catch((e) => endPage("error", t("common.error.title"), String(e && e.message || e)));
