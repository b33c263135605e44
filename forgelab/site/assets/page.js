/* Forge Workbook — the course page: progress per stage and the local-check panel.
 *
 * Progress lives in this browser's localStorage only. A picked verification.json is read with
 * FileReader and checked by ForgeVerify (verify.js); nothing is uploaded and no request is made.
 *
 * Every pick replaces the verdict: a valid result for this stage becomes the current result; a file
 * of another stage, or one that cannot be read, takes "self-check passed" away and says why, and the
 * last valid result stays on the page only as the *previous* one. Each step is marked done only by
 * its own event: "Lab downloaded" only by a click on the download link (or by opening the copy of the page
 * that came inside the lab bundle), never because a later step was reached.
 *
 * Both editions of the page (English and Chinese) share the progress of a stage. What is saved is
 * language-free — the picked document itself, or the facts of a pick that was refused — and is put
 * into words (t, from verify.js) each time it is shown, so a result saved on one edition reads in the
 * language of the other.
 */
(function () {
  "use strict";

  const course = window.FORGE_COURSE;
  const verify = window.ForgeVerify;
  const t = verify.t;
  const STATES = [
    { id: "not-started", label: () => t("Not started") },
    { id: "reading", label: () => t("Reading") },
    { id: "lab-downloaded", label: () => t("Lab downloaded") },
    { id: "results-read", label: () => t("Results read") },
    { id: "self-check-passed", label: () => t("Self-check passed") },
  ];
  const READING_SCROLL_PX = 120;
  // The flag that marks each step done, and what a passed-over step says instead of "done".
  const STEP_FLAGS = { reading: "reading", "lab-downloaded": "downloaded", "results-read": "results" };
  function passedOver(step) {
    return step === "lab-downloaded" ? t("not downloaded here") : t("skipped");
  }

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
    return { reading: false, downloaded: false, results: false, passed: false, evidence: null, lastPick: null };
  }

  /* The newest pick when it did not give a valid result for this stage: its file name and the facts of why. */
  function readLastPick(saved) {
    if (!saved || typeof saved !== "object" || typeof saved.fileName !== "string") return null;
    const code = String(saved.code || "other");
    if (saved.facts && typeof saved.facts === "object" && typeof saved.facts.kind === "string") {
      return { fileName: saved.fileName, code, facts: saved.facts };
    }
    if (typeof saved.title === "string") { // saved by an earlier version of this page, already in words
      return { fileName: saved.fileName, code, title: saved.title, message: String(saved.message || "") };
    }
    return null;
  }

  /* A saved document is checked again before it is believed: a damaged one is no result. */
  function readEvidence(saved, stageNumber) {
    if (!saved || typeof saved !== "object" || typeof saved.fileName !== "string") return null;
    try {
      if (verify.checkShape(saved.document, course)) return null;
      verify.evaluate(saved.document, stageNumber, course, saved.fileName, null);  // its digest is recomputed when shown
      return { fileName: saved.fileName, document: saved.document };
    } catch (error) {
      return null;
    }
  }

  function loadProgress(stageNumber) {
    const raw = storage.get(keyFor(stageNumber));
    if (!raw) return emptyProgress();
    try {
      const saved = JSON.parse(raw);
      const progress = emptyProgress();
      for (const flag of ["reading", "downloaded", "results", "passed"]) progress[flag] = saved[flag] === true;
      progress.evidence = readEvidence(saved.evidence, stageNumber);
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
        badge.textContent = state.label();
        badge.setAttribute("data-state", state.id);
      }
    }
    const clearAll = document.getElementById("clear-all-progress");
    const status = document.getElementById("index-status");
    if (clearAll) {
      clearAll.addEventListener("click", () => {
        for (const key of storage.keys()) if (key && key.startsWith(PREFIX)) storage.remove(key);
        refresh();
        if (status) status.textContent = t("Progress for every stage was cleared in this browser.");
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
    let savedSeal = null;  // the saved document's integrity digest recomputed in this browser (verify.recompute)

    /* The saved result, checked again now: in this page's language, against this page's course data. */
    function savedReport() {
      const saved = progress.evidence;
      return saved ? verify.evaluate(saved.document, stageNumber, course, saved.fileName, savedSeal) : null;
    }

    /* The words of the last refused pick (title and message), in this page's language. */
    function explainPick(pick) {
      return pick.facts ? verify.explain({ code: pick.code, facts: pick.facts }, stageNumber, course)
        : { title: pick.title, message: pick.message };
    }

    function renderState() {
      const current = stateIndex(progress);
      panel.setAttribute("data-state", STATES[current].id);
      steps.querySelectorAll("li[data-step]").forEach((li, index) => {
        const status = li.querySelector(".step-status");
        const step = li.getAttribute("data-step");
        const flag = STEP_FLAGS[step];
        const done = index < current && (!flag || progress[flag]);
        const over = index < current && !done;
        li.classList.toggle("done", done);
        li.classList.toggle("passed-over", over);
        li.classList.toggle("current", index === current);
        if (index === current) li.setAttribute("aria-current", "step");
        else li.removeAttribute("aria-current");
        status.textContent = done ? t("done") : over ? passedOver(step) : index === current ? t("current") : t("to do");
      });
      let text = t("State: {state} (step {step} of {total}).",
        { state: STATES[current].label(), step: current + 1, total: STATES.length });
      if (progress.lastPick) {
        text += t(" Your last pick, {file}, is not a result for this stage ({why}), so this stage is not marked as passed.",
          { file: progress.lastPick.fileName, why: explainPick(progress.lastPick).title });
        if (progress.evidence) text += t(" The result before it is kept below as the previous one.");
      }
      stateLine.textContent = text;
    }

    function update(change) {
      Object.assign(progress, change);
      saveProgress(stageNumber, progress);
      renderState();
    }

    function showMessage(pick) {
      const words = explainPick(pick);
      const children = [element("p", { class: "message-title", text: words.title })];
      if (pick.fileName) children.push(element("p", { class: "message-file", text: t("File: {file}", { file: pick.fileName }) }));
      children.push(element("p", {}, richText(words.message)));
      message.replaceChildren(...children);
      message.setAttribute("data-problem", pick.code);
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
      if (report.passed) return t("Self-check passed");
      return t("Not passed yet: {failing} of {count} checks need work",
        { failing: report.failingCount, count: report.checkCount });
    }

    function badgeText(status) {
      switch (status) {
        case "pass": return t("passed");
        case "fail": return t("needs work");
        case "note": return t("note");
        default: return t("not checked");
      }
    }

    function renderCheck(entry) {
      const body = [
        element("span", { class: "badge", text: badgeText(entry.status) }),
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
        element("p", { class: "report-meta", text: t("Checked by forgelab at {time} · target {target}",
          { time: report.checkedAt, target: report.target.name }) }),
        element("ul", { class: "checks" }, report.items.map(renderCheck)),
      );
    }

    /* The last valid result, shown only while a newer pick has replaced it: folded, and marked as the previous one. */
    function renderPrevious() {
      const report = progress.lastPick ? savedReport() : null;
      if (!report) {
        previousBox.replaceChildren();
        previousBox.hidden = true;
        previousBox.removeAttribute("data-outcome");
        return;
      }
      previousBox.setAttribute("data-outcome", outcomeOf(report));
      const summary = element("summary", {}, [
        element("span", { class: "previous-label", text: t("Previous result — no longer the current verdict: ") }),
        element("span", { class: "previous-headline", text: headline(report) }),
        document.createTextNode(t(" ({file}, checked by forgelab at {time})",
          { file: report.fileName, time: report.checkedAt })),
      ]);
      previousBox.replaceChildren(element("details", {}, [
        summary,
        element("p", { class: "report-caption", text: t("Your newer pick replaced this result. Pick this stage's " +
          "verification.json again to make it current.") }),
        element("ul", { class: "checks" }, report.items.map(renderCheck)),
      ]));
      previousBox.hidden = false;
    }

    function focusHeadline() {
      const headlineNode = reportBox.querySelector(".report-headline");
      if (headlineNode) headlineNode.focus({ preventScroll: false });
    }

    function acceptReport(report, documentValue, seal) {
      hideMessage();
      if (report.forThisStage) savedSeal = seal;
      renderReport(report, t("Result for {file}", { file: report.fileName }));
      if (report.forThisStage) {
        update({ results: true, passed: report.passed, evidence: { fileName: report.fileName, document: documentValue },
          lastPick: null });
      } else {
        update({ passed: false, lastPick: { fileName: report.fileName, code: "other-stage",
          facts: { kind: "other-stage", experiment_id: documentValue.experiment_id } } });
      }
      renderPrevious();
      focusHeadline();
    }

    function rejectFile(problem, fileName) {
      const pick = { fileName, code: problem.code, facts: problem.facts };
      renderReport(null);
      showMessage(pick);
      update({ passed: false, lastPick: pick });
      renderPrevious();
    }

    function handleFile(file) {
      const tooBig = verify.checkSize(file.size, { maxBytes: course.max_bytes });
      if (tooBig) {
        rejectFile(tooBig, file.name);
        return;
      }
      const reader = new FileReader();
      reader.addEventListener("load", () => {
        verify.checkBytes(new Uint8Array(reader.result), file.name, stageNumber, course).then((outcome) => {
          if (outcome.ok) acceptReport(outcome.report, outcome.document, outcome.seal);
          else rejectFile(outcome, file.name);
        }).catch((error) => {
          rejectFile({ code: "unexpected", facts: { kind: "unexpected", error: String(error.message) } }, file.name);
        });
      });
      reader.addEventListener("error", () => {
        rejectFile({ code: "unreadable", facts: { kind: "unreadable" } }, file.name);
      });
      reader.readAsArrayBuffer(file);
    }

    input.addEventListener("change", () => {
      const file = input.files && input.files[0];
      if (file) handleFile(file);
      input.value = ""; // picking the same file again runs the checks again
    });

    // Only a click on the download link itself marks the lab as downloaded — or, for the copy of this page that
    // ships inside the lab bundle, opening it: the lab is where the page is.
    for (const link of document.querySelectorAll("a[data-bundle]")) {
      link.addEventListener("click", () => update({ downloaded: true }));
    }
    if (course.in_bundle && !progress.downloaded) update({ downloaded: true });

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
      stateLine.textContent += t(" Progress for this stage was cleared in this browser.");
    });

    renderState();
    if (progress.lastPick) showMessage(progress.lastPick);
    markReading();
    // the saved result is shown once its integrity digest is recomputed (the browser computes digests asynchronously)
    const saved = progress.evidence;
    (saved ? verify.recompute(saved.document) : Promise.resolve(null)).then((seal) => {
      if (progress.evidence !== saved) return;  // a pick or a clear came first: it is the page's state now
      savedSeal = seal;
      if (progress.lastPick) renderPrevious();
      else if (saved) renderReport(savedReport(), t("Last result, saved in this browser: {file}", { file: saved.fileName }));
    });
  }

  const body = document.body;
  if (body.dataset.page === "index") initIndex();
  else if (body.dataset.page === "stage" && course.stages[body.dataset.stage]) initStage(body.dataset.stage);
})();
