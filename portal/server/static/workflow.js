// The participant's page (/workflow/{id}?pt=): the schema's steps as a form, one step at a time,
// the server's field checks mirrored before each save, the reviewer's change requests beside
// their fields, the validation results and the workflow's state.
import { ApiError, alertBox, api, call, el, endPage, otpForm, say, show, t, tn } from "./common.js";
import { problem, valueOf } from "./formcheck.js";

const parts = location.pathname.split("/").filter(Boolean);
const id = decodeURIComponent(parts[parts.indexOf("workflow") + 1] || "");
const storeKey = "esign.workflow." + id;
let token = new URLSearchParams(location.search).get("pt") || sessionStorage.getItem(storeKey) || "";

// wf calls a participant route and keeps the fresh token the service answers.
async function wf(method, suffix, json) {
  const r = await call(method, api(`/workflow/${encodeURIComponent(id)}${suffix}?token=${encodeURIComponent(token)}`), { json });
  const fresh = r.headers.get("X-Portal-Token");
  if (fresh) {
    token = fresh;
    sessionStorage.setItem(storeKey, token);
  }
  return r.data;
}

function failPage(e) {
  if (e.status === 401) return endPage("invalid", t("sign.invalid.title"), t("wf.invalid.text"));
  if (e.status === 404) return endPage("invalid", t("wf.notFound.title"), t("wf.notFound.text"));
  return endPage("error", t("common.error.title"), e.message);
}

async function load() {
  let p;
  try {
    p = await wf("GET", "");
  } catch (e) {
    if (e instanceof ApiError && e.code === "otp_required") return otpPage();
    if (e instanceof ApiError) return failPage(e);
    throw e;
  }
  render(p);
}

function otpPage() {
  show(el("h1", {}, t("page.title.workflow")), otpForm({
    channels: ["email"], destinationHint: t("wf.otpHint"),
    send: () => wf("POST", "/otp/send"), verify: (code) => wf("POST", "/otp/verify", { otp: code }), onVerified: load,
  }));
}

const labelOf = (f) => f.label || f.key;

function header(p) {
  return [el("h1", { id: "wf-title" }, p.title || t("page.title.workflow")),
    p.organizationName ? el("p", {}, ...tn("wf.from", { org: el("strong", {}, p.organizationName) })) : null,
    p.message ? el("blockquote", {}, p.message) : null,
    el("ol", { class: "step-list", "aria-label": t("wf.steps") }, ...p.steps.map((s) =>
      el("li", { "aria-current": s.index === p.currentStepIndex && ["in-progress", "changes-requested"].includes(p.state) ? "step" : false },
        s.title || s.id)))];
}

function render(p) {
  switch (p.state) {
    case "in-progress":
    case "changes-requested":
      return stepForm(p);
    case "validation-failed":
      return failedPage(p);
    case "pending-approval":
      return endPage("submitted", t("wf.submitted.title"), p.totalApprovalStages ? t("wf.submitted.stage", { stage: p.currentApprovalStage, total: p.totalApprovalStages }) : t("wf.submitted.any"), t("wf.submitted.mail"));
    case "sealing":
    case "complete":
      return endPage("done", t("wf.approved.title"), t("wf.approved.text"));
    case "rejected":
      return endPage("rejected", t("wf.rejected.title"), t("wf.rejected.text"));
    default:
      return endPage("closed", t("wf.closed.title"), t("wf.closed.state", { state: p.state }));
  }
}

// notes are the change requests and validation results about a field ("" for the whole form).
function notes(p, key) {
  const out = [];
  for (const c of p.changeRequests || []) {
    if ((c.fieldKey || "") === key) {
      out.push(el("p", { class: "change", role: "note", "data-change-for": key || "form" }, el("strong", {}, t("wf.change")), " ", c.message,
        c.dueDate ? " " + t("wf.changeBy", { date: c.dueDate }) : ""));
    }
  }
  for (const r of p.validationResults || []) {
    if ((r.fieldKey || "") === key && r.severity === "error" && !r.passed) out.push(el("p", { class: "error-text", role: "note" }, r.message));
  }
  return out;
}

function inputFor(f, value) {
  const idAttr = "f-" + f.key;
  const common = { id: idAttr, name: f.key, "aria-describedby": `${idAttr}-help ${idAttr}-err`, required: f.required || false };
  switch (f.type) {
    case "boolean":
      return el("input", { ...common, type: "checkbox", checked: value === true });
    case "text":
      return el("textarea", { ...common, rows: "4" }, value ?? "");
    case "enum":
      return el("select", common, el("option", { value: "" }, t("wf.choose")), ...(f.options || []).map((o) => el("option", { value: o, selected: o === value }, o)));
    case "number":
    case "integer":
      return el("input", { ...common, type: "number", inputmode: f.type === "integer" ? "numeric" : "decimal", step: f.type === "integer" ? "1" : "any", value: value ?? "" });
    case "date":
      return el("input", { ...common, type: "date", value: value ?? "" });
    case "email":
      return el("input", { ...common, type: "email", autocomplete: "email", value: value ?? "" });
    case "phone":
      return el("input", { ...common, type: "tel", autocomplete: "tel", value: value ?? "" });
    default:
      return el("input", { ...common, type: "text", value: value ?? "" });
  }
}

function stepForm(p) {
  const step = p.steps[p.currentStepIndex];
  const last = p.currentStepIndex === p.steps.length - 1;
  const msg = alertBox("step-message");
  const rows = step.fields.map((f) => {
    const input = inputFor(f, step.data[f.key]);
    const err = el("p", { id: `f-${f.key}-err`, class: "error-text", "aria-live": "polite" });
    const label = el("label", { for: input.id }, labelOf(f), f.required ? el("span", { "aria-hidden": "true" }, " *") : null, f.required ? el("span", { class: "hint" }, " ", t("wf.required")) : null);
    const help = el("p", { id: `f-${f.key}-help`, class: "hint" }, f.help || "");
    const row = el("div", { class: "field", "data-field": f.key }, ...(f.type === "boolean" ? [el("div", { class: "check" }, input, label)] : [label, input]), help, ...notes(p, f.key), err);
    return { f, input, err, row };
  });
  const showErrors = (errs) => {
    let first = null;
    for (const r of rows) {
      const m = errs[r.f.key] || "";
      r.err.textContent = m ? t("wf.fieldError", { label: labelOf(r.f), message: m }) : "";
      if (m) r.input.setAttribute("aria-invalid", "true"); else r.input.removeAttribute("aria-invalid");
      if (m && !first) first = r.input;
    }
    if (first) first.focus();
    return first !== null;
  };
  const form = el("form", { id: "step-form", novalidate: true, "aria-labelledby": "step-title", onsubmit: async (ev) => {
    ev.preventDefault();
    say(msg, "");
    const data = {}, errs = {};
    for (const r of rows) {
      const v = valueOf(r.f, r.input);
      const m = problem(r.f, v);
      if (m) errs[r.f.key] = m;
      data[r.f.key] = v === undefined ? null : v;
    }
    if (showErrors(errs)) return say(msg, t("wf.correct"));
    try {
      await wf("PATCH", `/step/${p.currentStepIndex}`, { data });
      await wf("POST", "/advance");
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      const byField = {};
      for (const fe of e.problem.errors || []) if (fe.field && fe.field.startsWith("data.")) byField[fe.field.slice(5)] = fe.message;
      if (showErrors(byField)) return say(msg, t("wf.refused"));
      if (e.status === 401 || e.status === 404) return failPage(e);
      return say(msg, e.message);
    }
    await load();
  } },
  el("h2", { id: "step-title" }, t("wf.step", { n: p.currentStepIndex + 1, total: p.steps.length, title: step.title || step.id })),
  p.state === "changes-requested" ? el("p", { class: "message", "data-kind": "info", role: "status" }, t("wf.changesInfo")) : null,
  ...notes(p, ""), ...rows.map((r) => r.row), msg,
  el("button", { type: "submit", id: "step-next", class: "primary" }, t(last ? "wf.submit" : "wf.next")));
  show(...header(p), form);
}

function failedPage(p) {
  const msg = alertBox("fix-message");
  show(...header(p), el("section", { "aria-labelledby": "failed-title", "data-end": "validation-failed" },
    el("h2", { id: "failed-title" }, t("wf.fix.title")),
    el("ul", {}, ...(p.validationResults || []).filter((r) => r.severity === "error" && !r.passed).map((r) => el("li", {}, r.message))),
    msg,
    el("button", { type: "button", id: "fix", class: "primary", onclick: async () => {
      try {
        await wf("POST", "/fix-validation");
        await load();
      } catch (e) {
        say(msg, e.message);
      }
    } }, t("wf.fix.button"))));
}

load().catch((e) => endPage("error", t("common.error.title"), String(e && e.message || e)));
