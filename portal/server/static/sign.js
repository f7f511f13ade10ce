// The signer's page (/sign?token= and /transfer?token=): activation, OTP, the document with the
// signer's fields, the three consent statements, the signature pad, decline and the
// cross-device transfer. Every call goes to the service's portal routes, but the signature,
// which the portal server forwards as the signed callback (POST {base}/portal-api/sign).
import * as pdfjs from "./vendor/pdf.min.mjs";
import { ApiError, BASE, LANG, alertBox, api, call, countdown, el, endPage, langQuery, main, otpForm, say, show, t, tn, useLanguage, when } from "./common.js";
import { signaturePad } from "./pad.js";

pdfjs.GlobalWorkerOptions.workerSrc = BASE + "/static/vendor/pdf.worker.min.mjs";

const params = new URLSearchParams(location.search);
const linkToken = params.get("token") || "";
const transfer = location.pathname.endsWith("/transfer");
const storeKey = "esign.access." + (transfer ? "t." : "s.") + linkToken.slice(-24);

const st = { view: null, token: "", viewed: false, consents: [], pad: null, stopPoll: null };

function keep(data) {
  if (data.accessToken) {
    st.token = data.accessToken;
    sessionStorage.setItem(storeKey, st.token);
  }
}

const kindLabel = (kind) => t("sign.kind." + kind);

// failPage turns a refused link or request into a clear end page.
function failPage(e) {
  const c = e.code || "";
  if (e.status === 410) {
    if (c === "session_cancelled") return endPage("cancelled", t("sign.cancelled.title"), e.message, t("sign.cancelled.text"));
    return endPage("expired", t("sign.expired.title"), t("sign.expired.text"), t("sign.expired.ask"));
  }
  if (c === "link_used") return endPage("used", t("sign.used.title"), t("sign.used.text"));
  if (c === "link_replaced") return endPage("superseded", t("sign.superseded.title"), t("sign.superseded.text"));
  if (c === "transfer_token_invalid") return endPage("transfer-invalid", t("sign.transferInvalid.title"), t("sign.transferInvalid.text"));
  if (c === "device_secondary") return viewOnly();
  if (e.status === 409) return endPage("closed", t("sign.closed.title"), e.message);
  if (e.status === 401) return endPage("invalid", t("sign.invalid.title"), t("sign.invalid.text"));
  return endPage("error", t("common.error.title"), e.message);
}

async function start() {
  if (!linkToken) return endPage("invalid", t("sign.incomplete.title"), t("sign.incomplete.text"));
  try {
    const saved = sessionStorage.getItem(storeKey);
    let data;
    if (saved) {
      data = (await call("GET", api("/esign/portal/session" + langQuery()), { token: saved })).data;
    } else if (transfer) {
      data = (await call("POST", api("/esign/portal/transfer/redeem" + langQuery()), { json: { token: linkToken } })).data;
    } else {
      data = (await call("POST", api("/esign/portal/activate" + langQuery()), { json: { token: linkToken } })).data;
    }
    keep(data);
    // The statements come in the slot's locale (else the browser's language): show the page in
    // the language of the text the signer accepts.
    if (useLanguage(data.language)) return;
    st.view = data;
    st.consents = data.consentsAccepted || [];
    st.viewed = data.slotState === "viewed";
    if (data.viewOnly) return viewOnly();
    if (data.slotState === "signed") return endPage("signed", t("sign.signed.title"), t("sign.signed.text"));
    if (data.slotState === "declined") return endPage("declined", t("sign.declined.title"), t("sign.declined.text"));
    await openDocument();
  } catch (e) {
    if (e instanceof ApiError) return failPage(e);
    throw e;
  }
}

function heading() {
  const v = st.view;
  return el("header", { class: "doc-head" },
    el("h1", { id: "doc-title" }, v.documentName),
    el("p", {}, t("sign.role", { role: v.role }), " ", el("span", { class: "hint" }, t("sign.openUntil", { date: when(v.expiresAt) }))));
}

// openDocument fetches the PDF; the service answers 403 otp_required until the OTP passed.
async function openDocument() {
  const url = new URL("/api/esign/document/" + encodeURIComponent(st.token), api("/")).href;
  let resp;
  try {
    resp = await fetch(url, { credentials: "omit", cache: "no-store" });
  } catch {
    throw new ApiError(0, { detail: t("sign.docUnavailable") });
  }
  if (resp.status === 403) {
    const p = await resp.json().catch(() => ({}));
    if (p.code === "otp_required") return otpStep();
    throw new ApiError(403, p);
  }
  if (!resp.ok) throw new ApiError(resp.status, await resp.json().catch(() => ({})));
  const data = new Uint8Array(await resp.arrayBuffer());
  await signingPage(data);
}

function otpStep() {
  const v = st.view;
  const choice = v.otpChannel === "signer-choice";
  const channels = choice ? ["email", "sms"] : [v.otpChannel === "sms" ? "sms" : "email"];
  const hint = t(choice ? "sign.otpHint.choice" : channels[0] === "sms" ? "sign.otpHint.sms" : "sign.otpHint.email");
  // The one-time QR code is offered here too (spec 000 X.2): a signer who opened the e-mail on a
  // laptop can move to her phone before any code is sent, and proves herself there.
  show(heading(), el("nav", { class: "toolbar", "aria-label": t("common.otherChoices") },
    el("button", { type: "button", id: "transfer-open", onclick: transferPanel }, t("sign.transfer.open"))), otpForm({
    channels, destinationHint: hint,
    send: async (channel) => {
      const r = await call("POST", api("/esign/portal/otp/send"), { json: choice ? { channel } : {}, token: st.token });
      keep(r.data);
      return r.data;
    },
    verify: async (code) => {
      const r = await call("POST", api("/esign/portal/otp/verify"), { json: { code }, token: st.token });
      keep(r.data);
    },
    onVerified: () => openDocument().catch((e) => (e instanceof ApiError ? failPage(e) : Promise.reject(e))),
  }));
}

// signingPage shows the document page by page with the signer's fields over it, then the
// fields to fill in, the consent statements and the signature.
async function signingPage(bytes) {
  const v = st.view;
  const fields = (v.fields || []).map((f, i) => ({ ...f, id: "field-" + i }));
  const pages = el("div", { class: "pages", id: "pages" });
  const docSection = el("section", { id: "document", "aria-labelledby": "doc-title" }, pages);
  const scrollHint = el("p", { id: "scroll-hint", class: "hint", role: "status" }, t("sign.readToEnd"));
  const inputs = fieldInputs(fields);
  const consent = consentSection();
  const signing = signSection(fields);
  show(heading(), toolbar(), docSection, scrollHint, inputs, consent, signing);
  const pdf = await pdfjs.getDocument({ data: bytes, isEvalSupported: false, enableXfa: false }).promise;
  for (let n = 1; n <= pdf.numPages; n++) {
    pages.append(await renderPage(pdf, n, fields.filter((f) => f.page === n)));
  }
  for (const input of document.querySelectorAll("#fields input")) input.dispatchEvent(new Event("input"));
  pages.dataset.rendered = String(pdf.numPages);
  const last = pages.lastElementChild;
  const markViewed = async () => {
    if (st.viewed) return;
    st.viewed = true;
    try {
      const r = await call("POST", api("/esign/portal/viewed"), { token: st.token });
      keep(r.data);
    } catch (e) {
      st.viewed = false;
      if (e instanceof ApiError) return failPage(e);
    }
    scrollHint.textContent = t("sign.seenAll");
    consent.dispatchEvent(new Event("viewed"));
  };
  if (st.viewed) {
    scrollHint.textContent = t("sign.seenAll");
    consent.dispatchEvent(new Event("viewed"));
  } else {
    new IntersectionObserver((entries, obs) => {
      if (entries.some((e) => e.isIntersecting)) {
        obs.disconnect();
        markViewed();
      }
    }, { threshold: 0.5 }).observe(last);
  }
}

async function renderPage(pdf, n, fields) {
  const page = await pdf.getPage(n);
  const ratio = window.devicePixelRatio || 1;
  const base = page.getViewport({ scale: 1 });
  const scale = Math.min(2, (Math.min(main.clientWidth, 900) / base.width)) * ratio;
  const vp = page.getViewport({ scale });
  const canvas = el("canvas", { width: Math.floor(vp.width), height: Math.floor(vp.height), "aria-hidden": "true" });
  await page.render({ canvas, canvasContext: canvas.getContext("2d"), viewport: vp }).promise;
  const wrap = el("figure", { class: "page", "data-page": n, "aria-label": t("sign.pageOf", { n, total: pdf.numPages }) }, canvas);
  for (const f of fields) {
    const [x1, y1, x2, y2] = vp.convertToViewportRectangle(f.rect);
    const left = Math.min(x1, x2) / vp.width * 100, top = Math.min(y1, y2) / vp.height * 100;
    const w = Math.abs(x2 - x1) / vp.width * 100, h = Math.abs(y2 - y1) / vp.height * 100;
    const box = el("button", { type: "button", class: "field-box kind-" + f.kind, "data-field": f.name, tabindex: "-1", "aria-hidden": "true",
      onclick: () => document.getElementById(f.kind === "signature" ? "signature-section" : f.id)?.focus() }, el("span", {}, kindLabel(f.kind)));
    Object.assign(box.style, { left: left + "%", top: top + "%", width: w + "%", height: h + "%" });
    wrap.append(box);
  }
  wrap.append(el("figcaption", {}, t("sign.pageOf", { n, total: pdf.numPages })));
  return wrap;
}

// fieldInputs is the list of the signer's fields to fill in, each labelled with its kind and
// page; the boxes over the pages mirror what is typed.
function fieldInputs(fields) {
  const list = fields.filter((f) => f.kind !== "signature");
  const sec = el("section", { id: "fields", "aria-labelledby": "fields-title", hidden: list.length === 0 });
  sec.append(el("h2", { id: "fields-title" }, t("sign.fields.title")));
  for (const f of list) {
    const label = t("sign.fields.label", { kind: kindLabel(f.kind), page: f.page });
    let input;
    if (f.kind === "checkbox") {
      input = el("input", { type: "checkbox", id: f.id, name: f.name, "data-kind": f.kind });
      sec.append(el("div", { class: "check" }, input, el("label", { for: f.id }, label)));
    } else {
      const attrs = { id: f.id, name: f.name, "data-kind": f.kind, required: true, "aria-required": "true" };
      if (f.kind === "date") Object.assign(attrs, { type: "date", value: new Date().toISOString().slice(0, 10) });
      else if (f.kind === "initials") Object.assign(attrs, { type: "text", maxlength: "10", autocomplete: "off" });
      else Object.assign(attrs, { type: "text", maxlength: "200" });
      input = el("input", attrs);
      sec.append(el("label", { for: f.id }, label), input);
    }
    const mirror = () => {
      for (const b of document.querySelectorAll(`.field-box[data-field="${CSS.escape(f.name)}"] span`)) {
        b.textContent = f.kind === "checkbox" ? (input.checked ? "\u2713" : "") : (input.value || kindLabel(f.kind));
      }
    };
    input.addEventListener("input", mirror);
    input.addEventListener("change", mirror);
  }
  return sec;
}

function consentSection() {
  const v = st.view;
  const accepted = new Set(st.consents.map((c) => c.id));
  const msg = alertBox("consent-message");
  const boxes = v.consentStatements.map((s) => el("div", { class: "check" },
    el("input", { type: "checkbox", id: "consent-" + s.id, name: "consent", value: s.id, disabled: true, checked: accepted.has(s.id) }),
    el("label", { for: "consent-" + s.id }, s.text)));
  const btn = el("button", { type: "submit", id: "consent-accept", class: "primary", disabled: true }, t("sign.consent.agree"));
  const done = el("p", { id: "consent-done", role: "status", hidden: accepted.size < v.consentStatements.length }, t("sign.consent.done"));
  const form = el("form", { id: "consent", "aria-labelledby": "consent-title", onsubmit: async (ev) => {
    ev.preventDefault();
    say(msg, "");
    const ids = v.consentStatements.map((s) => s.id);
    if (!ids.every((id) => document.getElementById("consent-" + id).checked)) {
      say(msg, t("sign.consent.tickAll"));
      return;
    }
    btn.disabled = true;
    try {
      const r = await call("POST", api("/esign/portal/consent"), { json: { statements: ids, version: v.consentStatements[0].version, language: v.language }, token: st.token });
      keep(r.data);
      st.consents = r.data.consentsAccepted;
      done.hidden = false;
      boxes.forEach((b) => { b.querySelector("input").disabled = true; });
      document.getElementById("signature-section").dispatchEvent(new Event("consented"));
    } catch (e) {
      btn.disabled = false;
      say(msg, e.message);
    }
  } }, el("h2", { id: "consent-title" }, t("sign.consent.title")), el("fieldset", { lang: v.language }, el("legend", { lang: LANG }, t("sign.consent.legend")), ...boxes), msg, btn, done);
  form.addEventListener("viewed", () => {
    if (accepted.size >= v.consentStatements.length) {
      document.getElementById("signature-section").dispatchEvent(new Event("consented"));
      return;
    }
    boxes.forEach((b) => { b.querySelector("input").disabled = false; });
    btn.disabled = false;
  });
  return form;
}

function signSection(fields) {
  const v = st.view;
  const msg = alertBox("sign-message");
  const name = el("input", { id: "signer-name", name: "signerName", autocomplete: "name", required: true, maxlength: "200", value: v.namePrefill || "" });
  const pad = signaturePad(() => name.value);
  const btn = el("button", { type: "submit", id: "sign-submit", class: "primary", disabled: true }, t("sign.submit"));
  const sec = el("form", { id: "signature-section", tabindex: "-1", "aria-labelledby": "sign-title", onsubmit: async (ev) => {
    ev.preventDefault();
    say(msg, "");
    const values = [];
    for (const f of fields.filter((f) => f.kind !== "signature")) {
      const input = document.getElementById(f.id);
      if (f.kind === "checkbox") values.push({ name: f.name, checked: input.checked });
      else if (!input.value.trim()) {
        say(msg, t("sign.fields.missing", { kind: kindLabel(f.kind), page: f.page }));
        input.setAttribute("aria-invalid", "true");
        input.focus();
        return;
      } else {
        input.removeAttribute("aria-invalid");
        values.push({ name: f.name, value: input.value.trim() });
      }
    }
    if (!name.value.trim()) {
      say(msg, t("sign.signature.typeName"));
      name.focus();
      return;
    }
    if (pad.empty()) {
      say(msg, t("sign.signature.draw"));
      return;
    }
    btn.disabled = true;
    try {
      const { data } = await call("POST", BASE + "/portal-api/sign", { json: {
        accessToken: st.token, sessionId: v.sessionId, signerName: name.value.trim(), signaturePng: pad.png(),
        fields: values, consents: st.consents } });
      sessionStorage.removeItem(storeKey);
      if (st.stopPoll) st.stopPoll();
      endPage("signed", t("sign.thanks.title"), t("sign.thanks.text", { document: v.documentName }),
        t(data.sessionState === "sealing" ? "sign.thanks.sealing" : "sign.thanks.next"));
    } catch (e) {
      btn.disabled = false;
      if (e instanceof ApiError && (e.status === 410 || e.code === "device_secondary")) return failPage(e);
      say(msg, e.message);
    }
  } },
  el("h2", { id: "sign-title" }, t("sign.signature.title")),
  el("label", { for: "signer-name" }, t("sign.signature.fullName")), name, pad.node, msg, btn);
  sec.addEventListener("consented", () => { btn.disabled = false; });
  return sec;
}

function toolbar() {
  return el("nav", { class: "toolbar", "aria-label": t("common.otherChoices") },
    el("button", { type: "button", id: "transfer-open", onclick: transferPanel }, t("sign.transfer.open")),
    el("button", { type: "button", id: "decline-open", class: "danger", onclick: declinePanel }, t("sign.decline.open")));
}

function panel(id, title, ...content) {
  document.getElementById(id)?.remove();
  const close = el("button", { type: "button", class: "close", onclick: () => {
    if (id === "transfer" && st.stopPoll) st.stopPoll();
    p.remove();
    document.getElementById(id + "-open")?.focus();
  } }, t("common.close"));
  const p = el("section", { id, class: "panel", role: "region", "aria-labelledby": id + "-title" }, el("h2", { id: id + "-title" }, title), ...content, close);
  main.querySelector(".toolbar").after(p);
  p.querySelector("h2").setAttribute("tabindex", "-1");
  p.querySelector("h2").focus();
  return p;
}

function declinePanel() {
  const msg = alertBox("decline-message");
  const reason = el("textarea", { id: "decline-reason", name: "reason", maxlength: "500", rows: "3", "aria-describedby": "decline-help" });
  panel("decline", t("sign.decline.open"), el("form", { onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      const r = await call("POST", api("/esign/portal/decline"), { json: reason.value.trim() ? { reason: reason.value.trim() } : {}, token: st.token });
      keep(r.data);
      sessionStorage.removeItem(storeKey);
      endPage("declined", t("sign.declined.title"), t("sign.declined.close"));
    } catch (e) {
      if (e instanceof ApiError && e.status === 410) return failPage(e);
      say(msg, e.message);
    }
  } }, el("label", { for: "decline-reason" }, t("sign.decline.reason")),
  el("p", { id: "decline-help", class: "hint" }, t("sign.decline.help")), reason, msg,
  el("button", { type: "submit", id: "decline-submit", class: "danger" }, t("sign.decline.submit"))));
}

async function transferPanel() {
  if (st.stopPoll) st.stopPoll(); // a new code replaces the one shown
  const msg = alertBox("transfer-message");
  const p = panel("transfer", t("sign.transfer.open"), el("p", {}, t("sign.transfer.text")), msg);
  try {
    const { data } = await call("POST", api("/esign/portal/transfer"), { token: st.token });
    keep(data);
    const left = el("span", { id: "transfer-left" });
    const stop = countdown(left, data.expiresAt, () => say(msg, t("sign.transfer.expired"), "info"));
    p.querySelector(".close").before(
      el("img", { id: "transfer-qr", src: "data:image/png;base64," + data.qrPng, alt: t("sign.transfer.qrAlt"), width: "240", height: "240" }),
      el("p", {}, t("sign.transfer.orLink"), " ", el("a", { id: "transfer-link", href: data.url }, t("sign.transfer.link"))),
      el("p", { role: "timer", "aria-live": "off" }, ...tn("sign.transfer.worksOnce", { left })));
    pollSecondary(stop);
  } catch (e) {
    say(msg, e.message);
  }
}

// pollSecondary reads the session every few seconds while the QR code is shown, to turn this
// page view-only once the other device took over.
function pollSecondary(stopCountdown) {
  const timer = setInterval(async () => {
    try {
      const { data } = await call("GET", api("/esign/portal/session" + langQuery()), { token: st.token });
      keep(data);
      if (data.viewOnly) {
        clearInterval(timer);
        stopCountdown();
        st.view = data;
        viewOnly();
      }
    } catch (e) {
      clearInterval(timer);
      stopCountdown();
      if (e instanceof ApiError) failPage(e);
    }
  }, 2000);
  st.stopPoll = () => { clearInterval(timer); stopCountdown(); };
}

function viewOnly() {
  if (st.stopPoll) st.stopPoll();
  const v = st.view;
  show(el("section", { class: "end view-only", "data-end": "view-only", "aria-labelledby": "vo-title" },
    el("h1", { id: "vo-title" }, t("sign.viewOnly.title")),
    el("p", {}, v ? t("sign.viewOnly.text", { document: v.documentName }) : t("sign.viewOnly.textNoDoc")),
    el("p", { id: "view-only-state" }, v ? t("sign.viewOnly.state", { state: stateName(v.slotState) }) : "")));
}

// stateName is a slot state in the page's language (the code itself for a state without one).
function stateName(state) {
  const s = t("sign.state." + state);
  return s === "sign.state." + state ? state.replace("_", " ") : s;
}

start().catch((e) => endPage("error", t("common.error.title"), e && e.message ? e.message : String(e)));
