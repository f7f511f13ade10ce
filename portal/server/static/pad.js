// The signature pad: draw with a mouse, finger or pen (Pointer Events), or type the name,
// which is drawn in a handwriting-like system font. png() is the image, base64 without prefix.
import { el, t } from "./common.js";

export function signaturePad(nameOf) {
  const canvas = el("canvas", { id: "signature-pad", width: "600", height: "200", role: "img", "aria-label": t("pad.area") });
  const ctx = canvas.getContext("2d");
  let drawn = false, typed = false, last = null;
  const reset = () => {
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    drawn = false;
    typed = false;
  };
  reset();
  const at = (ev) => {
    const r = canvas.getBoundingClientRect();
    return [(ev.clientX - r.left) * canvas.width / r.width, (ev.clientY - r.top) * canvas.height / r.height];
  };
  canvas.addEventListener("pointerdown", (ev) => {
    if (mode.value !== "draw") return;
    ev.preventDefault();
    canvas.setPointerCapture(ev.pointerId);
    last = at(ev);
  });
  canvas.addEventListener("pointermove", (ev) => {
    if (!last) return;
    const p = at(ev);
    ctx.strokeStyle = "#0b1f4d";
    ctx.lineCap = "round";
    ctx.lineJoin = "round";
    ctx.lineWidth = ev.pointerType === "pen" && ev.pressure ? 1.5 + ev.pressure * 3 : 3;
    ctx.beginPath();
    ctx.moveTo(last[0], last[1]);
    ctx.lineTo(p[0], p[1]);
    ctx.stroke();
    last = p;
    drawn = true;
  });
  const end = () => { last = null; };
  canvas.addEventListener("pointerup", end);
  canvas.addEventListener("pointercancel", end);

  const drawTyped = () => {
    reset();
    const name = (typedName.value || "").trim();
    if (!name) return;
    let size = 64;
    ctx.fillStyle = "#0b1f4d";
    do {
      ctx.font = `italic ${size}px "Brush Script MT", "Segoe Script", "URW Chancery L", cursive, serif`;
      size -= 4;
    } while (ctx.measureText(name).width > canvas.width - 40 && size > 16);
    ctx.textBaseline = "middle";
    ctx.fillText(name, 20, canvas.height / 2);
    typed = true;
  };
  const typedName = el("input", { id: "signature-typed", name: "signatureTyped", maxlength: "200", autocomplete: "name", oninput: drawTyped });
  const typedRow = el("div", { class: "typed", hidden: true }, el("label", { for: "signature-typed" }, t("pad.typeLabel")), typedName);
  const mode = { value: "draw" };
  const setMode = (m) => {
    mode.value = m;
    typedRow.hidden = m !== "type";
    canvas.classList.toggle("typing", m === "type");
    if (m === "type") {
      typedName.value = typedName.value || nameOf();
      drawTyped();
      typedName.focus();
    } else {
      reset();
    }
  };
  const choice = el("fieldset", { class: "choice" }, el("legend", {}, t("pad.how")),
    el("label", {}, el("input", { type: "radio", name: "sig-mode", id: "sig-mode-draw", value: "draw", checked: true, onchange: () => setMode("draw") }), " ", t("pad.draw")),
    el("label", {}, el("input", { type: "radio", name: "sig-mode", id: "sig-mode-type", value: "type", onchange: () => setMode("type") }), " ", t("pad.type")));
  const clearBtn = el("button", { type: "button", id: "signature-clear", onclick: () => (mode.value === "type" ? drawTyped() : reset()) }, t("pad.clear"));
  const node = el("div", { class: "pad" }, choice,
    el("p", { class: "hint", id: "pad-help" }, t("pad.help")),
    canvas, typedRow, clearBtn);
  canvas.setAttribute("aria-describedby", "pad-help");
  return {
    node,
    empty: () => !(drawn || typed),
    png: () => canvas.toDataURL("image/png").split(",")[1],
  };
}
