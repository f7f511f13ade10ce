// The portal's front page: what it is. Signers arrive through the links in their messages.
import { el, show, t } from "./common.js";

show(el("h1", {}, t("page.title.home")),
  el("p", {}, t("home.text")),
  el("p", { class: "hint" }, t("home.privacy")));
