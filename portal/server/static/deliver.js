// The recipient's page (/deliver/{id}?t=): what was sent and by whom, the OTP when the sender
// asked for one, and the download through the service's short-lived URL. The page records the
// opening and the download (POST .../access) as the spec's access events.
import { ApiError, alertBox, api, call, el, endPage, otpForm, say, show, t, useLanguage, when } from "./common.js";

const id = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
const token = new URLSearchParams(location.search).get("t") || "";
const route = (suffix = "") => api(`/delivery/${encodeURIComponent(id)}${suffix}?t=${encodeURIComponent(token)}`);

function failPage(e) {
  if (e.status === 410) {
    if (e.code === "delivery_revoked") return endPage("revoked", t("deliver.revoked.title"), t("deliver.revoked.text"));
    if (e.code === "document_gone") return endPage("expired", t("deliver.gone.title"), e.message);
    return endPage("expired", t("deliver.expired.title"), t("deliver.expired.text"));
  }
  if (e.status === 401 || e.status === 404) return endPage("invalid", t("sign.invalid.title"), t("deliver.invalid.text"));
  return endPage("error", t("common.error.title"), e.message);
}

async function start() {
  if (!id || !token) return endPage("invalid", t("sign.incomplete.title"), t("deliver.incomplete.text"));
  const { data: m } = await call("GET", route());
  if (useLanguage(m.locale)) return; // the page again in the recipient's language, then opened
  await call("POST", route("/access"), { json: { eventType: "opened" } });
  const head = [
    el("h1", { id: "doc-title" }, m.documentName),
    el("dl", { class: "meta" },
      el("dt", {}, t("deliver.from")), el("dd", { id: "sender" }, m.requesterOrg),
      el("dt", {}, t("deliver.for")), el("dd", {}, m.recipientName + (m.recipientRole ? ` (${m.recipientRole})` : "")),
      el("dt", {}, t("deliver.until")), el("dd", {}, when(m.expiresAt))),
    m.message ? el("blockquote", { id: "sender-message" }, m.message) : null,
  ];
  if (m.requireOtp && !m.otpVerified) {
    return show(...head, otpForm({
      channels: ["email"],
      destinationHint: t("deliver.otpHint"),
      send: async () => (await call("POST", route("/otp/send"))).data,
      verify: async (code) => call("POST", route("/otp/verify"), { json: { otp: code } }),
      onVerified: () => downloadPage(head),
    }));
  }
  downloadPage(head);
}

function downloadPage(head) {
  const msg = alertBox("download-message");
  const status = el("p", { id: "download-status", role: "status", "aria-live": "polite" });
  const btn = el("button", { type: "button", id: "download", class: "primary", onclick: async () => {
    say(msg, "");
    btn.disabled = true;
    try {
      const { data } = await call("POST", route("/download"));
      await call("POST", route("/access"), { json: { eventType: "downloaded" } });
      status.textContent = t("deliver.started");
      status.dataset.done = "true";
      location.assign(data.sasUrl);
    } catch (e) {
      if (e instanceof ApiError && e.status === 410) return failPage(e);
      say(msg, e.message);
    } finally {
      btn.disabled = false;
    }
  } }, t("deliver.download"));
  show(...head, el("section", { "aria-labelledby": "dl-title" }, el("h2", { id: "dl-title" }, t("deliver.title")), el("p", {}, t("deliver.pdf")), btn, status, msg));
}

start().catch((e) => (e instanceof ApiError ? failPage(e) : endPage("error", t("common.error.title"), String(e && e.message || e))));
