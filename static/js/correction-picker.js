/* The correction form's "what should change?" list (the record's fields, the values a link chose
   or a search found): a filter box before it hides the options that do not contain every word
   typed (task, model, value, unit). Without this script the list works as it is. */
(function () {
  "use strict";
  function words(text) {
    return text.toLowerCase().split(/\s+/).filter(Boolean);
  }
  function attach(select) {
    if (select.dataset.filterReady) return;
    select.dataset.filterReady = "1";
    var options = Array.prototype.slice.call(select.options);
    var texts = options.map(function (option) { return option.text.toLowerCase(); });
    var input = document.createElement("input");
    input.type = "search";
    input.id = select.id + "_filter";
    input.className = "picker-filter";
    input.setAttribute("autocomplete", "off");
    input.setAttribute("aria-controls", select.id);
    input.setAttribute("placeholder", "Type a task, model or value");
    var label = document.createElement("label");
    label.htmlFor = input.id;
    label.textContent = (select.getAttribute("data-filter-label") || "Filter") + " the list";
    var count = document.createElement("p");
    count.className = "help picker-count";
    count.id = select.id + "_count";
    count.setAttribute("aria-live", "polite");
    input.setAttribute("aria-describedby", count.id);
    var box = document.createElement("div");
    box.className = "picker-filter-box";
    box.appendChild(label);
    box.appendChild(input);
    box.appendChild(count);
    select.parentNode.insertBefore(box, select);
    if (options.length > 12) select.size = 10; // a list that shows what matches while one types
    function apply() {
      var wanted = words(input.value);
      var shown = 0;
      options.forEach(function (option, index) {
        var match = wanted.every(function (word) { return texts[index].indexOf(word) !== -1; });
        var visible = match || option.selected; // the chosen target stays in view
        option.hidden = !visible;
        if (match) shown += 1;
      });
      count.textContent = wanted.length ? shown + " of " + options.length + " entries match" : options.length + " entries";
    }
    input.addEventListener("input", apply);
    // Enter in the filter box chooses the first match rather than sending the form.
    input.addEventListener("keydown", function (event) {
      if (event.key !== "Enter") return;
      event.preventDefault();
      for (var i = 0; i < options.length; i += 1) {
        if (!options[i].hidden) { select.value = options[i].value; break; }
      }
      apply();
    });
    apply();
  }
  function init() {
    document.querySelectorAll("select.filterable").forEach(attach);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
