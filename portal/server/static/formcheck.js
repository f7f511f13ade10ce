// The server's field checks (shared/template checkField) mirrored in the browser, so that a
// participant sees what is wrong before anything is sent. The server checks again; its answer
// (400 record_invalid at data.<key>) is shown beside the field the same way.

const E164 = /^\+[1-9][0-9]{6,14}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
// Controls other than tab and (for text) line breaks, bidi controls and line/paragraph separators.
const BAD_LINE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;
const BAD_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

import { t } from "./common.js";

const fmt = (n) => String(n);

// valueOf reads an input as the JSON value the server expects: undefined when empty.
export function valueOf(field, input) {
  if (field.type === "boolean") return input.checked;
  const raw = input.value;
  if (raw === "") return undefined;
  if (field.type === "number" || field.type === "integer") {
    const n = Number(raw);
    return Number.isFinite(n) && raw.trim() !== "" ? n : raw;
  }
  return raw;
}

// problem is the message of the first check value fails, "" when it passes.
export function problem(field, value) {
  if (value === undefined || value === null) return field.required ? t("check.required") : "";
  switch (field.type) {
    case "boolean":
      return typeof value === "boolean" ? "" : t("check.boolean");
    case "number":
    case "integer": {
      if (typeof value !== "number" || !Number.isFinite(value)) return t("check.number");
      if (field.type === "integer" && (!Number.isInteger(value) || Math.abs(value) > 2 ** 53)) return t("check.integer");
      if (field.min !== undefined && value < field.min) return t("check.min", { n: fmt(field.min) });
      if (field.max !== undefined && value > field.max) return t("check.max", { n: fmt(field.max) });
      return "";
    }
  }
  if (typeof value !== "string") return t("check.string");
  if ((field.type === "text" ? BAD_TEXT : BAD_LINE).test(value)) return t("check.control");
  switch (field.type) {
    case "enum":
      return (field.options || []).includes(value) ? "" : t("check.enum", { options: (field.options || []).join(", ") });
    case "date": {
      const d = new Date(value + "T00:00:00Z");
      return DATE.test(value) && !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value ? "" : t("check.date");
    }
    case "email": {
      const at = value.lastIndexOf("@");
      const ok = value.length <= 254 && at > 0 && !/[\s<>(),;:"\[\]\\]/.test(value) && value.slice(at + 1).includes(".") && !value.slice(at + 1).endsWith(".");
      if (!ok) return t("check.email");
      break;
    }
    case "phone":
      if (!E164.test(value)) return t("check.phone");
      break;
  }
  const n = [...value].length;
  if (field.minLength !== undefined && n < field.minLength) return t("check.minLength", { n: field.minLength });
  if (field.maxLength !== undefined && n > field.maxLength) return t("check.maxLength", { n: field.maxLength });
  if (field.pattern) {
    let re = null;
    try { re = new RegExp(`^(?:${field.pattern})$`, "u"); } catch { re = null; } // RE2 syntax JS lacks: the server decides
    if (re && !re.test(value)) return t("check.pattern");
  }
  return "";
}
