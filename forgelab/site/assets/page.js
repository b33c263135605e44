/* Forge Workbook — the course page: progress per stage and the local-check panel.
 *
 * Progress lives in this browser's localStorage only. A picked verification.json is read with
 * FileReader and checked by ForgeVerify (verify.js); nothing is uploaded and no request is made.
 *
 * Every pick replaces the verdict: a valid result for this stage becomes the current result; a file
 * of another stage, or one that cannot be read, takes "self-check passed" away and says why, and the
 * last valid result stays on the page only as the *previous* one. Each step is marked done only by
 * its own event: "Lab downloaded" only by a click on the download link, never because a later step
 * was reached.
 */
(function () {
  "use strict";

  const course = window.FORGE_COURSE;
  const verify = window.ForgeVerify;
  const STATES = [
    { id: "not-started", label: "Not started" },
    { id: "reading", label: "Reading" },
    { id: "lab-downloaded", label: "Lab downloaded" },
    { id: "results-read", label: "Results read" },
    { id: "self-check-passed", label: "Self-check passed" },
  ];
  const READING_SCROLL_PX = 120;
  // The flag that marks each step done, and what a passed-over step says instead of "done".
  const STEP_FLAGS = { reading: "reading", "lab-downloaded": "downloaded", "results-read": "results" };
  const PASSED_OVER = { reading: "skipped", "lab-downloaded": "not downloaded here", "results-read": "skipped" };

  // ---------------------------------------------------------------- storage (never throws)
  const memory = new Map();
  const storage = {
    get(key) {
      try { return window.localStorage.getItem(key); } catch (error) { return memory.get(key) ?? null; }
    },
    set(key, value) {
      try { window.localStorage.setItem(key, value); } catch (error) { memory.set(key, value); }
    },
    remove(key) {
      memory.delete(key);
      try { window.localStorage.removeItem(key); } catch (error) { /* memory only */ }
    },
    keys() {
      const found = new Set(memory.keys());
      try {
        for (let i = 0; i < window.localStorage.length; i++) found.add(window.localStorage.key(i));
      } catch (error) { /* memory only */ }
      return Array.from(found);
    },
  };

  const PREFIX = `forge-workbook:${course.module_id}:`;
  const keyFor = (stageNumber) => PREFIX + course.stages[stageNumber].key;

  function emptyProgress() {
    return { reading: false, downloaded: false, results: false, passed: false, report: null, lastPick: null };
  }

  /* The newest pick when it did not give a valid result for this stage: what it was and why. */
  function readLastPick(saved) {
    if (!saved || typeof saved !== "object") return null;
    const { fileName, code, title, message } = saved;
    if (typeof fileName !== "string" || typeof title !== "string") return null;
    return { fileName, title, code: String(code || "other"), message: String(message || "") };
  }

  function loadProgress(stageNumber) {
    const raw = storage.get(keyFor(stageNumber));
    if (!raw) return emptyProgress();
    try {
      const saved = JSON.parse(raw);
      const progress = emptyProgress();
      for (const flag of ["reading", "downloaded", "results", "passed"]) progress[flag] = saved[flag] === true;
      progress.report = saved.report && Array.isArray(saved.report.items) ? saved.report : null;
      progress.lastPick = readLastPick(saved.lastPick);
      if (progress.lastPick) progress.passed = false; // a newer pick replaced the passing verdict
      return progress;
    } catch (error) {
      return emptyProgress(); // a damaged entry is treated as no progress
    }
  }

  function saveProgress(stageNumber, progress) {
    storage.set(keyFor(stageNumber), JSON.stringify(progress));
  }

  function stateIndex(progress) {
    if (progress.passed) return 4;
    if (progress.results) return 3;
    if (progress.downloaded) return 2;
    if (progress.reading) return 1;
    return 0;
  }

  // ---------------------------------------------------------------- small DOM helpers
  function element(tag, attributes, children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (name === "text") node.textContent = value;
      else node.setAttribute(name, value);
    }
    for (const child of children || []) node.append(child);
    return node;
  }

  /* Text with `code` spans, built as DOM nodes: file content is never parsed as HTML. */
  function richText(text) {
    const nodes = [];
    String(text).split("`").forEach((part, index) => {
      if (index % 2) nodes.push(element("code", { text: part }));
      else if (part) nodes.push(document.createTextNode(part));
    });
    return nodes;
  }

  // ---------------------------------------------------------------- index page
  function initIndex() {
    function refresh() {
      for (const badge of document.querySelectorAll("[data-progress-for]")) {
        const number = badge.getAttribute("data-progress-for");
        if (!course.stages[number]) continue;
        const state = STATES[stateIndex(loadProgress(number))];
        badge.textContent = state.label;
        badge.setAttribute("data-state", state.id);
      }
    }
    const clearAll = document.getElementById("clear-all-progress");
    const status = document.getElementById("index-status");
    if (clearAll) {
      clearAll.addEventListener("click", () => {
        for (const key of storage.keys()) if (key && key.startsWith(PREFIX)) storage.remove(key);
        refresh();
        if (status) status.textContent = "Progress for every stage was cleared in this browser.";
      });
    }
    window.addEventListener("pageshow", refresh);
    refresh();
  }

  // ---------------------------------------------------------------- stage page
  function initStage(stageNumber) {
    const panel = document.getElementById("local-check");
    const steps = document.getElementById("check-steps");
    const stateLine = document.getElementById("check-state");
    const input = document.getElementById("verification-file");
    const message = document.getElementById("file-message");
    const reportBox = document.getElementById("report");
    const previousBox = document.getElementById("previous-report");
    const clearButton = document.getElementById("clear-progress");
    let progress = loadProgress(stageNumber);

    function renderState() {
      const current = stateIndex(progress);
      panel.setAttribute("data-state", STATES[current].id);
      steps.querySelectorAll("li[data-step]").forEach((li, index) => {
        const status = li.querySelector(".step-status");
        const step = li.getAttribute("data-step");
        const flag = STEP_FLAGS[step];
        const done = index < current && (!flag || progress[flag]);
        const passedOver = index < current && !done;
        li.classList.toggle("done", done);
        li.classList.toggle("passed-over", passedOver);
        li.classList.toggle("current", index === current);
        if (index === current) li.setAttribute("aria-current", "step");
        else li.removeAttribute("aria-current");
        status.textContent = done ? "done" : passedOver ? PASSED_OVER[step] : index === current ? "current" : "to do";
      });
      let text = `State: ${STATES[current].label} (step ${current + 1} of ${STATES.length}).`;
      if (progress.lastPick) {
        text += ` Your last pick, ${progress.lastPick.fileName}, is not a result for this stage ` +
          `(${progress.lastPick.title}), so this stage is not marked as passed.`;
        if (progress.report) text += " The result before it is kept below as the previous one.";
      }
      stateLine.textContent = text;
    }

    function update(change) {
      Object.assign(progress, change);
      saveProgress(stageNumber, progress);
      renderState();
    }

    function showMessage(problem, fileName) {
      const children = [element("p", { class: "message-title", text: problem.title })];
      if (fileName) children.push(element("p", { class: "message-file", text: `File: ${fileName}` }));
      children.push(element("p", {}, richText(problem.message)));
      message.replaceChildren(...children);
      message.setAttribute("data-problem", problem.code);
      message.hidden = false;
    }

    function hideMessage() {
      message.hidden = true;
      message.removeAttribute("data-problem");
      message.replaceChildren();
    }

    function headline(report) {
      if (!report.forThisStage) {
        const belongs = report.items.find((entry) => entry.id === "experiment");
        return belongs.title;
      }
      if (report.passed) return "Self-check passed";
      return `Not passed yet: ${report.failingCount} of ${report.checkCount} checks need work`;
    }

    function renderCheck(entry) {
      const badgeText = { pass: "passed", fail: "needs work", note: "note", skip: "not checked" }[entry.status];
      const body = [
        element("span", { class: "badge", text: badgeText }),
        element("strong", { class: "check-title", text: entry.title }),
        element("p", {}, richText(entry.text)),
      ];
      if (entry.details.length) body.push(element("ul", {}, entry.details.map((d) => element("li", {}, richText(d)))));
      if (entry.link && course.stages[entry.belongsTo]) {
        body.push(element("p", {}, [element("a", { href: course.stages[entry.belongsTo].page, text: entry.link.text })]));
      }
      return element("li", { class: "check", "data-check": entry.id, "data-status": entry.status }, body);
    }

    function outcomeOf(report) {
      return !report.forThisStage ? "other-stage" : report.passed ? "passed" : "not-passed";
    }

    function renderReport(report, caption) {
      if (!report) {
        reportBox.replaceChildren();
        reportBox.removeAttribute("data-outcome");
        return;
      }
      reportBox.setAttribute("data-outcome", outcomeOf(report));
      reportBox.replaceChildren(
        element("p", { class: "report-caption", text: caption }),
        element("h3", { class: "report-headline", tabindex: "-1", text: headline(report) }),
        element("p", { class: "report-meta", text: `Checked by forgelab at ${report.checkedAt} · target ${report.target.name}` }),
        element("ul", { class: "checks" }, report.items.map(renderCheck)),
      );
    }

    /* The last valid result, shown only while a newer pick has replaced it: folded, and marked as the previous one. */
    function renderPrevious() {
      const report = progress.lastPick ? progress.report : null;
      if (!report) {
        previousBox.replaceChildren();
        previousBox.hidden = true;
        previousBox.removeAttribute("data-outcome");
        return;
      }
      previousBox.setAttribute("data-outcome", outcomeOf(report));
      const summary = element("summary", {}, [
        element("span", { class: "previous-label", text: "Previous result — no longer the current verdict: " }),
        element("span", { class: "previous-headline", text: headline(report) }),
        document.createTextNode(` (${report.fileName}, checked by forgelab at ${report.checkedAt})`),
      ]);
      previousBox.replaceChildren(element("details", {}, [
        summary,
        element("p", { class: "report-caption", text: `Your newer pick replaced this result. Pick this stage's verification.json again to make it current.` }),
        element("ul", { class: "checks" }, report.items.map(renderCheck)),
      ]));
      previousBox.hidden = false;
    }

    function focusHeadline() {
      const headlineNode = reportBox.querySelector(".report-headline");
      if (headlineNode) headlineNode.focus({ preventScroll: false });
    }

    function acceptReport(report) {
      hideMessage();
      renderReport(report, `Result for ${report.fileName}`);
      if (report.forThisStage) {
        update({ results: true, passed: report.passed, report, lastPick: null });
      } else {
        const experiment = report.items.find((entry) => entry.id === "experiment");
        update({ passed: false, lastPick: { fileName: report.fileName, code: "other-stage", title: headline(report),
          message: experiment ? experiment.text : "" } });
      }
      renderPrevious();
      focusHeadline();
    }

    function rejectFile(problem, fileName) {
      renderReport(null);
      showMessage(problem, fileName);
      update({ passed: false, lastPick: { fileName, code: problem.code, title: problem.title, message: problem.message } });
      renderPrevious();
    }

    function handleFile(file) {
      const stage = course.stages[stageNumber];
      const tooBig = verify.checkSize(file.size, {
        stage: stage.number, evidenceDir: stage.evidence_dir, maxBytes: course.max_bytes,
      });
      if (tooBig) {
        rejectFile(tooBig, file.name);
        return;
      }
      const reader = new FileReader();
      reader.addEventListener("load", () => {
        try {
          const outcome = verify.checkBytes(new Uint8Array(reader.result), file.name, stageNumber, course);
          if (outcome.ok) acceptReport(outcome.report);
          else rejectFile(outcome, file.name);
        } catch (error) {
          rejectFile({ code: "unexpected", title: "This file could not be checked",
            message: `Something unexpected happened while reading it (${error.message}). Run \`forgelab check ${stageNumber}\` and pick the new file.` },
          file.name);
        }
      });
      reader.addEventListener("error", () => {
        rejectFile({ code: "unreadable", title: "The file could not be read",
          message: "The browser could not open it. Pick the file again, or copy it somewhere readable first." }, file.name);
      });
      reader.readAsArrayBuffer(file);
    }

    input.addEventListener("change", () => {
      const file = input.files && input.files[0];
      if (file) handleFile(file);
      input.value = ""; // picking the same file again runs the checks again
    });

    // Only a click on the download link itself marks the lab as downloaded.
    for (const link of document.querySelectorAll("a[data-bundle]")) {
      link.addEventListener("click", () => update({ downloaded: true }));
    }

    // "Reading" means opened and scrolled: a scroll of READING_SCROLL_PX from where the page was when it
    // opened (or was cleared). A page too short to scroll counts as read when opened.
    let scrollBaseline = window.scrollY;
    function markReading() {
      if (progress.reading) return;
      const scrollable = document.documentElement.scrollHeight > window.innerHeight + READING_SCROLL_PX;
      if (!scrollable || Math.abs(window.scrollY - scrollBaseline) >= READING_SCROLL_PX) update({ reading: true });
    }
    window.addEventListener("scroll", markReading, { passive: true });

    clearButton.addEventListener("click", () => {
      storage.remove(keyFor(stageNumber));
      progress = emptyProgress();
      hideMessage();
      renderReport(null);
      renderPrevious();
      renderState();
      scrollBaseline = window.scrollY; // read after the re-render: a shorter page may have moved it
      stateLine.textContent += " Progress for this stage was cleared in this browser.";
    });

    renderState();
    if (progress.lastPick) {
      showMessage({ code: progress.lastPick.code, title: progress.lastPick.title, message: progress.lastPick.message },
        progress.lastPick.fileName);
      renderPrevious();
    } else if (progress.report) {
      renderReport(progress.report, `Last result, saved in this browser: ${progress.report.fileName}`);
    }
    markReading();
  }

  const body = document.body;
  if (body.dataset.page === "index") initIndex();
  else if (body.dataset.page === "stage" && course.stages[body.dataset.stage]) initStage(body.dataset.stage);
})();
