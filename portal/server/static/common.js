// Shared helpers of the portal's pages: building DOM without innerHTML, calling the service's
// routes (JSON in, JSON or problem+json out) and showing a page's end states.

export const body = document.body;
export const API = body.dataset.api;
export const BASE = body.dataset.base || "";
export const main = document.getElementById("main");

// The page's language and its part of the message catalogue (shared/i18n), put in the page by
// the server. No text a person reads is written in these scripts: it comes from here.
export const LANG = body.dataset.lang || "en";
export const LANG_CHOSEN = body.hasAttribute("data-lang-chosen");
const catalogue = JSON.parse(document.getElementById("i18n")?.textContent || "{}");

// t is the text of key with each {name} replaced by vars[name].
export function t(key, vars = {}) {
  const s = catalogue[key] ?? key;
  return s.replace(/\{([a-zA-Z]+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
}

// tn is t for a text with nodes in it: an array of strings and the nodes of vars.
export function tn(key, vars = {}) {
  return (catalogue[key] ?? key).split(/(\{[a-zA-Z]+\})/).filter(Boolean).map((p) => {
    const k = p.slice(1, -1);
    return p.startsWith("{") && k in vars ? vars[k] : p;
  });
}

// useLanguage reloads the page in lang unless it is shown in it already or the signer chose
// its language: the slot's or recipient's locale wins over the browser's. It answers whether
// a reload is under way.
export function useLanguage(lang) {
  if (!lang || lang === LANG || LANG_CHOSEN) return false;
  const u = new URL(location.href);
  u.searchParams.set("lang", lang);
  location.replace(u.href);
  return true;
}

// langQuery is "?lang=<page language>" when the signer chose it, for the service's answers
// that hold text (the consent statements); else "" and the service picks.
export function langQuery() {
  return LANG_CHOSEN ? "?lang=" + encodeURIComponent(LANG) : "";
}

// when formats a time for the page's language.
export function when(iso) {
  return new Date(iso).toLocaleString(LANG);
}

// el builds an element: el("p", {class: "x", onclick: fn}, "text", child, ...).
export function el(tag, attrs = {}, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") n.addEventListener(k.slice(2), v);
    else if (k === "text") n.textContent = v;
    else if (v === true) n.setAttribute(k, "");
    else n.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    n.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return n;
}

// ApiError is a problem+json answer (or a network failure: status 0).
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || t("common.error.title"));
    this.status = status;
    this.code = problem.code || "";
    this.problem = problem;
  }
  // fieldMessage is the message of the first field error at path, "" when none.
  fieldMessage(path) {
    const f = (this.problem.errors || []).find((e) => e.field === path);
    return f ? f.message : "";
  }
}

// call sends a JSON request and answers the parsed body with the response's headers.
export async function call(method, url, { json, token, headers = {} } = {}) {
  const h = { ...headers };
  if (json !== undefined) h["Content-Type"] = "application/json";
  if (token) h.Authorization = `Bearer ${token}`;
  let resp;
  try {
    resp = await fetch(url, { method, headers: h, body: json === undefined ? undefined : JSON.stringify(json), credentials: "omit", cache: "no-store" });
  } catch (e) {
    throw new ApiError(0, { detail: t("common.unreachable") });
  }
  const text = await resp.text();
  let data = {};
  if (text) {
    try { data = JSON.parse(text); } catch { data = { detail: text.slice(0, 200) }; }
  }
  if (!resp.ok) throw new ApiError(resp.status, data);
  return { data, headers: resp.headers };
}

export const api = (path) => API + path;

// clear empties main and sets the document title's page name.
export function clear() {
  main.replaceChildren();
}

// show replaces the page's content and moves focus to its heading, so that screen readers
// announce the new step.
export function show(...nodes) {
  clear();
  main.append(...nodes.flat().filter((n) => n !== null && n !== undefined && n !== false));
  const h = main.querySelector("h1, h2");
  if (h) {
    h.setAttribute("tabindex", "-1");
    h.focus();
  }
}

// endPage is a final page (expired, used link, done): a heading, text and a state class the
// tests and the stylesheet read.
export function endPage(kind, title, ...text) {
  show(el("section", { class: "end " + kind, "data-end": kind, role: "region", "aria-labelledby": "end-title" },
    el("h1", { id: "end-title" }, title), ...text.map((t) => el("p", {}, t))));
}

// alertBox is an inline message region (errors are announced, status politely).
export function alertBox(id) {
  return el("p", { id, class: "message", role: "alert", "aria-live": "assertive", hidden: true });
}

export function say(node, text, kind = "error") {
  node.textContent = text;
  node.hidden = !text;
  node.dataset.kind = kind;
}

// countdown writes "m:ss" left until `until` into node every second; onEnd runs once at zero.
export function countdown(node, until, onEnd) {
  const end = new Date(until).getTime();
  const tick = () => {
    const left = Math.max(0, Math.round((end - Date.now()) / 1000));
    node.textContent = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
    if (left === 0) {
      clearInterval(timer);
      if (onEnd) onEnd();
    }
  };
  const timer = setInterval(tick, 1000);
  tick();
  return () => clearInterval(timer);
}

// otpForm is the one-time passcode step: a send button (with a channel choice when offered),
// a 6-digit input and a verify button. send(channel) and verify(code) call the service.
export function otpForm({ channels, destinationHint, send, verify, onVerified }) {
  const msg = alertBox("otp-message");
  const status = el("p", { id: "otp-status", role: "status", "aria-live": "polite" });
  const code = el("input", { id: "otp-code", name: "otp", inputmode: "numeric", autocomplete: "one-time-code", pattern: "[0-9]{6}", maxlength: "6", required: true, "aria-describedby": "otp-help" });
  let channel = channels[0];
  const choice = channels.length > 1 ? el("fieldset", { class: "choice" }, el("legend", {}, t("otp.where")),
    ...channels.map((c, i) => el("label", {}, el("input", { type: "radio", name: "otp-channel", value: c, checked: i === 0, onchange: () => { channel = c; } }), " ", c === "sms" ? t("otp.channel.sms") : t("otp.channel.email")))) : null;
  const sendBtn = el("button", { type: "button", id: "otp-send", onclick: async () => {
    sendBtn.disabled = true;
    say(msg, "");
    try {
      const r = await send(channel);
      status.textContent = r.destination ? t("otp.sentTo", { destination: r.destination }) : t("otp.sent");
      code.focus();
    } catch (e) {
      say(msg, e.message);
    } finally {
      setTimeout(() => { sendBtn.disabled = false; }, 1500);
    }
  } }, t("otp.send"));
  const form = el("form", { id: "otp-form", novalidate: true, onsubmit: async (ev) => {
    ev.preventDefault();
    say(msg, "");
    if (!/^[0-9]{6}$/.test(code.value.trim())) {
      say(msg, t("otp.enterDigits"));
      code.setAttribute("aria-invalid", "true");
      code.focus();
      return;
    }
    code.removeAttribute("aria-invalid");
    try {
      await verify(code.value.trim());
      onVerified();
    } catch (e) {
      const left = e.problem && e.problem.attemptsLeft !== undefined ? " " + t("otp.attemptsLeft", { n: e.problem.attemptsLeft }) : "";
      say(msg, e.message + left);
      code.focus();
    }
  } },
  el("h2", { id: "otp-title" }, t("otp.title")),
  el("p", {}, destinationHint),
  choice, sendBtn, status,
  el("label", { for: "otp-code" }, t("otp.code")),
  el("p", { id: "otp-help", class: "hint" }, t("otp.help")),
  code, msg,
  el("button", { type: "submit", id: "otp-verify", class: "primary" }, t("otp.verify")));
  return form;
}
