// Shared helpers of the portal's pages: building DOM without innerHTML, calling the service's
// routes (JSON in, JSON or problem+json out) and showing a page's end states.

export const body = document.body;
export const API = body.dataset.api;
export const BASE = body.dataset.base || "";
export const main = document.getElementById("main");

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
    super(problem.detail || problem.title || `request failed (${status})`);
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
  if (token) h.Authorization = "Bearer " + token;
  let resp;
  try {
    resp = await fetch(url, { method, headers: h, body: json === undefined ? undefined : JSON.stringify(json), credentials: "omit", cache: "no-store" });
  } catch (e) {
    throw new ApiError(0, { detail: "The service could not be reached. Check your connection and try again." });
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
  const choice = channels.length > 1 ? el("fieldset", { class: "choice" }, el("legend", {}, "Where should we send the code?"),
    ...channels.map((c, i) => el("label", {}, el("input", { type: "radio", name: "otp-channel", value: c, checked: i === 0, onchange: () => { channel = c; } }), c === "sms" ? " Text message (SMS)" : " E-mail"))) : null;
  const sendBtn = el("button", { type: "button", id: "otp-send", onclick: async () => {
    sendBtn.disabled = true;
    say(msg, "");
    try {
      const r = await send(channel);
      status.textContent = `We sent a 6-digit code${r.destination ? " to " + r.destination : ""}. It is valid for a few minutes.`;
      code.focus();
    } catch (e) {
      say(msg, e.message);
    } finally {
      setTimeout(() => { sendBtn.disabled = false; }, 1500);
    }
  } }, "Send me a code");
  const form = el("form", { id: "otp-form", novalidate: true, onsubmit: async (ev) => {
    ev.preventDefault();
    say(msg, "");
    if (!/^[0-9]{6}$/.test(code.value.trim())) {
      say(msg, "Enter the 6 digits of the code.");
      code.setAttribute("aria-invalid", "true");
      code.focus();
      return;
    }
    code.removeAttribute("aria-invalid");
    try {
      await verify(code.value.trim());
      onVerified();
    } catch (e) {
      const left = e.problem && e.problem.attemptsLeft !== undefined ? ` Attempts left: ${e.problem.attemptsLeft}.` : "";
      say(msg, e.message + left);
      code.focus();
    }
  } },
  el("h2", { id: "otp-title" }, "Confirm it is you"),
  el("p", {}, destinationHint),
  choice, sendBtn, status,
  el("label", { for: "otp-code" }, "Code"),
  el("p", { id: "otp-help", class: "hint" }, "6 digits, from the message we sent you."),
  code, msg,
  el("button", { type: "submit", id: "otp-verify", class: "primary" }, "Verify"));
  return form;
}
