// The recipient's page (/deliver/{id}?t=): what was sent and by whom, the OTP when the sender
// asked for one, and the download through the service's short-lived URL. The page records the
// opening and the download (POST .../access) as the spec's access events.
import { ApiError, alertBox, api, call, el, endPage, otpForm, say, show } from "./common.js";

const id = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
const token = new URLSearchParams(location.search).get("t") || "";
const route = (suffix = "") => api(`/delivery/${encodeURIComponent(id)}${suffix}?t=${encodeURIComponent(token)}`);

function failPage(e) {
  if (e.status === 410) {
    if (e.code === "delivery_revoked") return endPage("revoked", "This document was withdrawn", "The sender withdrew it. Ask them if you still need it.");
    if (e.code === "document_gone") return endPage("expired", "This document is no longer available", e.message);
    return endPage("expired", "This link has expired", "The time to download this document is over. Ask the sender to send it again.");
  }
  if (e.status === 401 || e.status === 404) return endPage("invalid", "This link is not valid", "Check that you opened the whole link from your message.");
  return endPage("error", "Something went wrong", e.message);
}

async function start() {
  if (!id || !token) return endPage("invalid", "This link is incomplete", "Open the whole link from your message.");
  const { data: m } = await call("GET", route());
  await call("POST", route("/access"), { json: { eventType: "opened" } });
  const head = [
    el("h1", { id: "doc-title" }, m.documentName),
    el("dl", { class: "meta" },
      el("dt", {}, "From"), el("dd", { id: "sender" }, m.requesterOrg),
      el("dt", {}, "For"), el("dd", {}, m.recipientName + (m.recipientRole ? ` (${m.recipientRole})` : "")),
      el("dt", {}, "Available until"), el("dd", {}, new Date(m.expiresAt).toLocaleString())),
    m.message ? el("blockquote", { id: "sender-message" }, m.message) : null,
  ];
  if (m.requireOtp && !m.otpVerified) {
    return show(...head, otpForm({
      channels: ["email"],
      destinationHint: "The sender asked us to check it is you: we e-mail you a one-time code before you can download.",
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
      status.textContent = "Your download has started. The link works for 15 minutes.";
      status.dataset.done = "true";
      location.assign(data.sasUrl);
    } catch (e) {
      if (e instanceof ApiError && e.status === 410) return failPage(e);
      say(msg, e.message);
    } finally {
      btn.disabled = false;
    }
  } }, "Download the document");
  show(...head, el("section", { "aria-labelledby": "dl-title" }, el("h2", { id: "dl-title" }, "Download"), el("p", {}, "The document downloads as a PDF file."), btn, status, msg));
}

start().catch((e) => (e instanceof ApiError ? failPage(e) : endPage("error", "Something went wrong", String(e && e.message || e))));
