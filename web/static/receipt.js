// The receipt page's one action: the browser's print dialog (the stylesheet's print rules fit A4, Letter and 80 mm).
// Opened with ?print=1 (the counter's Print receipt), the dialog opens at once.
"use strict";
document.getElementById("print")?.addEventListener("click", () => window.print());
if (new URLSearchParams(window.location.search).get("print") === "1" && document.getElementById("print")) {
  window.addEventListener("load", () => window.print());
}
