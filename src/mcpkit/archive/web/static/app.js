// mcpkit archive: keyboard help for the pages (loaded as a file: the CSP allows no inline script).
// "/" focuses the search box; j / k move between results; Escape leaves the box.
(function () {
  "use strict";
  function typing(target) {
    return target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.isContentEditable);
  }
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    var box = document.getElementById("q");
    if (event.key === "/" && box && !typing(event.target)) {
      event.preventDefault();
      box.focus();
      box.select();
    } else if (event.key === "Escape" && event.target === box) {
      box.blur();
    } else if ((event.key === "j" || event.key === "k") && !typing(event.target)) {
      var links = Array.prototype.slice.call(document.querySelectorAll(".post .permalink"));
      if (!links.length) return;
      var at = links.indexOf(document.activeElement);
      var next = event.key === "j" ? Math.min(at + 1, links.length - 1) : Math.max(at - 1, 0);
      links[next].focus();
      links[next].closest(".post").scrollIntoView({ block: "nearest" });
      event.preventDefault();
    }
  });
})();
