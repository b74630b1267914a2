// The receipt page's one action: the browser's print dialog (the stylesheet's print rules fit A4, Letter and 80 mm).
"use strict";
document.getElementById("print")?.addEventListener("click", () => window.print());
