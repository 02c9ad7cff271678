// Keyboard shortcuts, the copy button and the campaign refresh. Plain script, no build step.
// Values from the server are inserted with textContent only, never as HTML.
(function () {
  "use strict";
  const page = document.body.dataset.page;

  function typing(target) {
    const tag = target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || target.isContentEditable;
  }

  function follow(selector) {
    const link = document.querySelector(selector);
    if (link) window.location.assign(link.href);
  }

  // --- queue: j/k move across groups (folded rows are skipped until unfolded), Enter/o open, f folds/unfolds,
  // x selects, / goes to the filters.
  function visibleRows() {
    return Array.from(document.querySelectorAll("#queue tr[data-href]")).filter((row) => !row.hidden);
  }

  function toggleGroup(label, open) {
    const button = document.querySelector(`button[data-toggle="${CSS.escape(label)}"]`);
    const body = document.querySelector(`tbody[data-group="${CSS.escape(label)}"]`);
    if (!button || !body) return;
    const show = open === undefined ? button.getAttribute("aria-expanded") !== "true" : open;
    button.setAttribute("aria-expanded", String(show));
    body.querySelectorAll("tr.folded").forEach((row) => {
      row.hidden = !show;
      if (!show) row.classList.remove("current");
    });
  }

  document.querySelectorAll("button[data-toggle]").forEach((button) => {
    button.addEventListener("click", () => toggleGroup(button.dataset.toggle));
  });
  // Selecting a group's lead selects the findings folded under it (they share one root cause).
  document.querySelectorAll("input[data-group-select]").forEach((box) => {
    box.addEventListener("change", () => {
      const body = box.closest("tbody");
      if (body) body.querySelectorAll("tr.folded input[type=checkbox]").forEach((other) => { other.checked = box.checked; });
    });
  });

  function queueKeys(event) {
    const rows = visibleRows();
    if (!rows.length && event.key !== "/") return false;
    let index = rows.findIndex((row) => row.classList.contains("current"));
    const move = (to) => {
      if (index >= 0) rows[index].classList.remove("current");
      index = Math.max(0, Math.min(rows.length - 1, to));
      rows[index].classList.add("current");
      rows[index].scrollIntoView({ block: "nearest" });
    };
    switch (event.key) {
      case "j": move(index + 1); return true;
      case "k": move(index < 0 ? 0 : index - 1); return true;
      case "Enter": case "o":
        if (index >= 0) window.location.assign(rows[index].dataset.href);
        return index >= 0;
      case "f": {
        const body = index >= 0 ? rows[index].closest("tbody[data-group]") : null;
        if (body) toggleGroup(body.dataset.group);
        return Boolean(body);
      }
      case "x":
        if (index >= 0) {
          const box = rows[index].querySelector("input[type=checkbox]");
          if (box) { box.checked = !box.checked; box.dispatchEvent(new Event("change")); }
        }
        return index >= 0;
      case "/": {
        const box = document.querySelector("details.filter-box");
        if (box) box.open = true;
        const first = document.querySelector("#filters input, #filters select");
        if (first) first.focus();
        return true;
      }
      case "n": follow("#next-page"); return true;
    }
    return false;
  }

  // --- finding: j/k older/newer, a/r focus the accept/reject note (Enter submits), c copies, u queue.
  function findingKeys(event) {
    const focus = (id) => {
      const field = document.getElementById(id);
      if (field) { field.focus(); field.closest("form").classList.add("armed"); }
      return Boolean(field);
    };
    switch (event.key) {
      case "j": follow("#older"); return true;
      case "k": follow("#newer"); return true;
      case "a": return focus("note-accept");
      case "r": return focus("note-reject");
      case "c": { const b = document.getElementById("copy-repro"); if (b) b.click(); return Boolean(b); }
      case "u": follow("#back-to-queue"); return true;
    }
    return false;
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target)) {
      if (event.key === "Escape") {
        event.target.blur();
        document.querySelectorAll("form.armed").forEach((f) => f.classList.remove("armed"));
      }
      return;
    }
    const handled = page === "queue" ? queueKeys(event) : page === "finding" ? findingKeys(event)
      : page === "candidate" && event.key === "u" ? (follow("#back-to-queue"), true) : false;
    if (handled) event.preventDefault();
  });

  // --- copy button: copies the plain text of the element named by data-copy.
  document.querySelectorAll("button[data-copy]").forEach((button) => {
    button.addEventListener("click", async () => {
      const source = document.getElementById(button.dataset.copy);
      const status = document.getElementById(button.dataset.status || "copy-status");
      if (!source) return;
      try {
        await navigator.clipboard.writeText(source.textContent);
        if (status) status.textContent = "copied";
      } catch (err) {
        // No clipboard (a page served over plain http to another machine): select the shown text instead.
        const shown = source.hidden && source.previousElementSibling ? source.previousElementSibling : source;
        const range = document.createRange();
        range.selectNodeContents(shown);
        const selection = window.getSelection();
        if (selection) { selection.removeAllRanges(); selection.addRange(range); }
        if (status) status.textContent = "copy failed: the text is selected, press Ctrl+C";
      }
    });
  });

  // --- campaigns: refresh the numbers and plots without reloading the page.
  if (page === "campaigns") {
    const fields = ["tasks_done", "executions", "executions_per_s", "ended_at"];
    const show = (value) => (value === null || value === undefined ? "-" :
      typeof value === "number" && !Number.isInteger(value) ? value.toPrecision(4) : String(value));
    async function refresh() {
      try {
        const response = await fetch("/api/campaigns", { headers: { Accept: "application/json" } });
        if (!response.ok) return;
        const data = await response.json();
        const pending = document.querySelector("[data-field=pending_harnesses]");
        if (pending) pending.textContent = show(data.pending_harnesses);
        for (const run of data.campaigns) {
          const section = document.querySelector(`section[data-run="${Number(run.id)}"]`);
          if (!section) continue;
          for (const name of fields) {
            const cell = section.querySelector(`[data-field=${name}]`);
            if (cell) cell.textContent = show(run[name]);
          }
          const state = section.querySelector("[data-field=state]");
          if (state) state.textContent = run.running ? "running" : (run.exit_reason || "ended");
          const verdicts = section.querySelector("[data-field=verdicts]");
          if (verdicts) verdicts.textContent = Object.keys(run.verdicts).sort().map((k) => `${k} ${run.verdicts[k]}`).join(", ");
          const plot = section.querySelector("img[data-plot]");
          if (plot && run.running) plot.src = `/campaigns/${Number(run.id)}/verdicts.svg?t=${Date.now()}`;
        }
      } catch (err) { /* the server restarting: try again on the next tick */ }
    }
    const every = Number(document.getElementById("campaigns")?.dataset.refreshMs) || 5000;
    setInterval(refresh, Math.max(250, every));
  }
})();
