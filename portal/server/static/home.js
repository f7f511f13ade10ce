// The portal's front page: what it is. Signers arrive through the links in their messages.
import { el, show } from "./common.js";

show(el("h1", {}, "Signing portal"),
  el("p", {}, "Open the link in your invitation to sign a document, download a document sent to you, or fill in a form."),
  el("p", { class: "hint" }, "This page keeps nothing about you."));
