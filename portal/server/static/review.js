// The reviewer's page (/workflow/{id}/review?pt=): the participant's answers, the validation
// results, and the decision: approve, approve with an exception (the justification box), reject,
// or send back with change requests beside named fields.
import { ApiError, alertBox, api, call, el, endPage, say, show } from "./common.js";

const parts = location.pathname.split("/").filter(Boolean);
const id = decodeURIComponent(parts[parts.indexOf("workflow") + 1] || "");
const token = new URLSearchParams(location.search).get("pt") || "";
const route = (suffix) => api(`/workflow/${encodeURIComponent(id)}${suffix}?token=${encodeURIComponent(token)}`);

function failPage(e) {
  if (e.code === "reviewer_token_spent") return endPage("spent", "This review is closed", "A decision was recorded, or the review moved on. Nothing more to do with this link.");
  if (e.status === 401) return endPage("invalid", "This link is not valid", "Open the link in your latest e-mail.");
  return endPage("error", "Something went wrong", e.message);
}

async function start() {
  let p;
  try {
    p = (await call("GET", route(""))).data;
  } catch (e) {
    if (e instanceof ApiError) return failPage(e);
    throw e;
  }
  if (p.state !== "pending-approval") return endPage("closed", "Nothing to decide", `This submission is ${p.state.replace("-", " ")}.`);
  const fields = p.steps.flatMap((s) => s.fields.map((f) => ({ ...f, step: s })));
  const answers = el("section", { "aria-labelledby": "answers-title" }, el("h2", { id: "answers-title" }, "Answers"),
    ...p.steps.map((s) => el("div", {}, el("h3", {}, s.title || s.id), el("dl", { class: "meta" },
      ...s.fields.flatMap((f) => [el("dt", {}, f.label || f.key), el("dd", { "data-answer": f.key }, display(s.data[f.key]))])))));
  const failed = (p.validationResults || []).filter((r) => r.severity === "error" && !r.passed); // passed rules are listed too
  const results = failed.length ? el("section", { "aria-labelledby": "rules-title" }, el("h2", { id: "rules-title" }, "Checks that failed"),
    el("ul", {}, ...failed.map((r) => el("li", {}, r.message)))) : null;
  show(el("h1", {}, p.title || "Review a submission"),
    el("p", {}, p.totalApprovalStages ? `Approval stage ${p.currentApprovalStage} of ${p.totalApprovalStages}.` : "Approval by any approver."), answers, results, decisionForm(fields, failed.length > 0));
}

function display(v) {
  if (v === undefined || v === null || v === "") return "—";
  if (typeof v === "boolean") return v ? "Yes" : "No";
  return String(v);
}

function changeItem(fields, n) {
  const fid = `change-${n}`;
  return el("fieldset", { class: "change-item", "data-item": n }, el("legend", {}, `Change ${n + 1}`),
    el("label", { for: `${fid}-field` }, "About the field"),
    el("select", { id: `${fid}-field`, name: "fieldKey" }, el("option", { value: "" }, "The whole form"),
      ...fields.map((f) => el("option", { value: f.key }, f.label || f.key))),
    el("label", { for: `${fid}-message` }, "What should change"),
    el("textarea", { id: `${fid}-message`, name: "message", rows: "2", maxlength: "1000", required: true }),
    el("label", { for: `${fid}-severity` }, "Importance"),
    el("select", { id: `${fid}-severity`, name: "severity" }, el("option", { value: "error" }, "Must change"),
      el("option", { value: "warning" }, "Should change"), el("option", { value: "info" }, "For information")));
}

function decisionForm(fields, rulesFailed) {
  const msg = alertBox("decision-message");
  const choices = [["approve", "Approve"], ["approve-with-exception", "Approve with an exception"], ["request-changes", "Send back with changes"], ["reject", "Reject"]];
  const justification = el("textarea", { id: "justification", name: "justification", rows: "3", maxlength: "2000", "aria-describedby": "justification-help" });
  const justRow = el("div", { hidden: true }, el("label", { for: "justification" }, "Justification (required)"),
    el("p", { id: "justification-help", class: "hint" }, "Why the submission is approved although checks failed. Kept on record word for word."), justification);
  const items = el("div", { id: "change-items" }, changeItem(fields, 0));
  const changesRow = el("div", { hidden: true }, items,
    el("button", { type: "button", id: "change-add", onclick: () => items.append(changeItem(fields, items.children.length)) }, "Add another change"));
  let decision = rulesFailed ? "approve-with-exception" : "approve";
  const sync = () => {
    justRow.hidden = decision !== "approve-with-exception";
    changesRow.hidden = decision !== "request-changes";
  };
  const radios = el("fieldset", {}, el("legend", {}, "Your decision"), ...choices.map(([v, label]) =>
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
          say(msg, `Describe change ${empty + 1}.`);
          items.children[empty].querySelector("[name=message]").focus();
          return;
        }
        await call("POST", route("/request-changes"), { json: { changes } });
        return endPage("decided", "Sent back with changes", "The participant is asked to change their answers.");
      }
      if (decision === "approve-with-exception" && !justification.value.trim()) {
        say(msg, "Write the justification for the exception.");
        justification.setAttribute("aria-invalid", "true");
        justification.focus();
        return;
      }
      await call("POST", route("/governance-decision"), { json: { decision, justification: decision === "approve-with-exception" ? justification.value.trim() : "" } });
      endPage("decided", decision === "reject" ? "Rejected" : "Approved", "Your decision is recorded.");
    } catch (e) {
      if (e instanceof ApiError && (e.code === "reviewer_token_spent" || e.status === 401)) return failPage(e);
      const f = e instanceof ApiError ? (e.problem.errors || [])[0] : null;
      say(msg, f ? `${f.field}: ${f.message}` : e.message);
    }
  } }, el("h2", { id: "decision-title" }, "Decision"), radios, justRow, changesRow, msg,
  el("button", { type: "submit", id: "decision-submit", class: "primary" }, "Record my decision"));
}

start().catch((e) => endPage("error", "Something went wrong", String(e && e.message || e)));
