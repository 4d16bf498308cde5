// localtable explorer: the few behaviours a page needs beyond forms.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // The entity editor: add and remove property rows.
  const props = document.querySelector("#props tbody");
  const tmpl = document.getElementById("prop-template");
  const add = document.getElementById("add-prop");
  if (props && tmpl && add) {
    add.addEventListener("click", () => {
      const row = tmpl.content.firstElementChild.cloneNode(true);
      props.appendChild(row);
      row.querySelector(".pname").focus();
    });
    props.addEventListener("click", (ev) => {
      const btn = ev.target.closest(".remove-prop");
      if (btn) btn.closest("tr").remove();
    });
  }
  // The column chooser: the chosen columns become $select.
  const apply = document.getElementById("apply-columns");
  const all = document.getElementById("all-columns");
  const sel = document.getElementById("select");
  const form = document.getElementById("query");
  if (apply && sel && form) {
    apply.addEventListener("click", () => {
      const chosen = [...document.querySelectorAll(".col-choice:checked")].map((c) => c.value);
      sel.value = chosen.join(",");
      form.submit();
    });
  }
  if (all && sel && form) {
    all.addEventListener("click", (ev) => {
      ev.preventDefault();
      sel.value = "";
      form.submit();
    });
  }
});
