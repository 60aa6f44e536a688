/* Names for the admin widgets that Django and its select2 leave unnamed (axe-core: label,
   aria-input-field-name, aria-prohibited-attr, empty-table-header). Widgets are drawn after load
   and when an inline row is added, so this runs again whenever the page grows. */
(function () {
  "use strict";
  function labelFor(id) {
    var label = id && document.querySelector('label[for="' + id + '"]');
    return label ? label.textContent.replace(/[:*\s]+$/, "").trim() : "";
  }
  function name() {
    // select2 comboboxes of autocomplete fields: named by the field's label
    document.querySelectorAll("select.admin-autocomplete").forEach(function (select) {
      var box = select.nextElementSibling;
      var combo = box && box.querySelector('.select2-selection[role="combobox"]');
      var text = labelFor(select.id) || select.getAttribute("aria-label") || select.name;
      if (combo && text) {
        [combo, combo.querySelector('[role="textbox"]'), combo.querySelector(".select2-search__field")].forEach(function (element) {
          if (element && !element.getAttribute("aria-label")) element.setAttribute("aria-label", text);
        });
      }
    });
    // a multiple select's "remove all" cross sits in its list as a bare span: a mouse affordance
    document.querySelectorAll(".select2-selection__rendered > span.select2-selection__clear").forEach(function (cross) {
      cross.setAttribute("aria-hidden", "true");
    });
    // a table wider than its box scrolls: keyboard users must be able to reach it
    document.querySelectorAll(".inline-group .tabular, .table-wrap").forEach(function (box) {
      if (box.scrollWidth > box.clientWidth && !box.hasAttribute("tabindex")) {
        box.setAttribute("tabindex", "0");
      }
    });
    // the filter widget's search icon: an aria-label needs a role to be allowed
    document.querySelectorAll(".help-tooltip[aria-label]:not([role])").forEach(function (icon) {
      icon.setAttribute("role", "img");
    });
    // tabular inlines' header cells without text (the row's own column, hidden fields)
    document.querySelectorAll(".tabular thead th").forEach(function (th) {
      if (!th.textContent.trim()) {
        var span = document.createElement("span");
        span.className = "visually-hidden";
        span.textContent = th.classList.contains("original") ? "Record" : "Other";
        th.appendChild(span);
      }
    });
  }
  var pending = false;
  function soon() {
    if (!pending) {
      pending = true;
      window.requestAnimationFrame(function () { pending = false; name(); });
    }
  }
  document.addEventListener("DOMContentLoaded", function () {
    name();
    new MutationObserver(soon).observe(document.body, { childList: true, subtree: true });
  });
  window.addEventListener("load", soon);
  window.addEventListener("resize", soon);
})();
