/* Forge Workbook — reading and checking a verification.json, entirely in this browser.
 *
 * Pure logic, no DOM: the canonical JSON form that forgelab seals and its SHA-256 (the browser's Web Crypto,
 * crypto.subtle), the published schema's problems (from the validator Ajv generated, assets/schema-check.js),
 * the classification of a picked file, and the checks that the stage page explains. Nothing here makes a
 * network request.
 *
 * Words: every sentence a learner reads is written here in English and said through t(), which
 * looks it up in window.FORGE_STRINGS (assets/strings.js, written by `forgelab site build` from
 * forgelab's gettext catalog for the page's edition). {name} placeholders take values; numbers are
 * written with String(), never in the browser's locale. What the classification finds about a file is
 * kept as language-free facts (problem.facts), and explain() turns them into words when they are shown,
 * so a verdict saved on the English page reads in Chinese on the Chinese one.
 */
(function (global) {
  "use strict";

  // ---------------------------------------------------------------- the page's words
  const STRINGS = global.FORGE_STRINGS && typeof global.FORGE_STRINGS === "object" ? global.FORGE_STRINGS : {};

  /* The message in the page's language (its English text is the key), with {name} placeholders filled. */
  function t(text, values) {
    const said = Object.prototype.hasOwnProperty.call(STRINGS, text) ? STRINGS[text] : text;
    return said.replace(/\{(\w+)\}/g, (whole, name) =>
      values && Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : whole);
  }

  // ---------------------------------------------------------------- SHA-256 (the browser's Web Crypto)
  /* Why this page cannot compute a digest, or null when it can. crypto.subtle exists only in a secure context:
     a page opened from a file (file://), from 127.0.0.1 or localhost (`forgelab site serve`) or over https; a page
     served to another machine over plain http has none. */
  function noDigests() {
    const subtle = global.crypto && global.crypto.subtle;
    return subtle && typeof subtle.digest === "function" ? null : "no-web-crypto";
  }

  /* The SHA-256 of some bytes as lowercase hex (a promise); rejects when the browser offers no Web Crypto. */
  async function sha256Bytes(bytes) {
    if (noDigests()) throw new Error("crypto.subtle is not available to this page");
    const digest = await global.crypto.subtle.digest("SHA-256", bytes);
    return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
  }

  function sha256Hex(text) {
    return sha256Bytes(new TextEncoder().encode(text));
  }

  // ---------------------------------------------------------------- canonical JSON
  // Python's json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False): keys sorted
  // by code point, no spaces, non-ASCII characters as they are. Documents hold no floats.
  function byCodePoint(a, b) {
    const left = Array.from(a);
    const right = Array.from(b);
    for (let i = 0; i < Math.min(left.length, right.length); i++) {
      const diff = left[i].codePointAt(0) - right[i].codePointAt(0);
      if (diff !== 0) return diff;
    }
    return left.length - right.length;
  }

  function canonicalJson(value) {
    if (value === null || typeof value !== "object") return JSON.stringify(value);
    if (Array.isArray(value)) return "[" + value.map(canonicalJson).join(",") + "]";
    const keys = Object.keys(value).sort(byCodePoint);
    return "{" + keys.map((key) => JSON.stringify(key) + ":" + canonicalJson(value[key])).join(",") + "}";
  }

  function integrityDigest(documentValue) {
    const body = {};
    for (const key of Object.keys(documentValue)) if (key !== "integrity") body[key] = documentValue[key];
    return sha256Hex(canonicalJson(body));
  }

  /* What the integrity check needs, computed once per document before it is evaluated (a promise):
     { digest } recomputed here, or { missing } naming why this browser cannot recompute it. */
  async function recompute(documentValue) {
    const missing = noDigests();
    return missing ? { missing } : { digest: await integrityDigest(documentValue) };
  }

  // ---------------------------------------------------------------- JSON Schema (Ajv's generated validator)
  function typeOf(value) {
    if (value === null) return "null";
    if (Array.isArray(value)) return "array";
    if (typeof value === "object") return "object";
    if (typeof value === "string") return "string";
    if (typeof value === "boolean") return "boolean";
    return Number.isInteger(value) ? "integer" : "number";
  }

  /* What a value is, as a learner reads it. */
  function isWord(type) {
    switch (type) {
      case "null": return t("null");
      case "array": return t("a list");
      case "object": return t("an object");
      case "string": return t("text");
      case "boolean": return t("true/false");
      case "integer": return t("a whole number");
      default: return t("a number");
    }
  }

  /* What a value should be, as a learner reads it. */
  function shouldWord(type) {
    switch (type) {
      case "object": return t("an object");
      case "array": return t("a list");
      case "string": return t("text");
      case "integer": return t("a whole number");
      case "number": return t("a number");
      case "boolean": return t("true or false");
      default: return t("null");
    }
  }

  function either(words) {
    return words.reduce((first, second) => t("{first} or {second}", { first, second }));
  }

  function hasType(value, type) {
    switch (type) {
      case "object": return value !== null && typeof value === "object" && !Array.isArray(value);
      case "array": return Array.isArray(value);
      case "string": return typeof value === "string";
      case "integer": return Number.isInteger(value);
      case "number": return typeof value === "number";
      case "boolean": return typeof value === "boolean";
      case "null": return value === null;
      default: return false;
    }
  }

  /* The value at a JSON Pointer (Ajv's instancePath) and its path as a learner reads it: tests[0].name. */
  function locate(root, pointer) {
    let value = root;
    let path = "";
    for (const raw of pointer.split("/").slice(1)) {
      const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
      path = Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
      value = value === null || value === undefined ? undefined : value[key];
    }
    return { value, path };
  }

  function inside(path, key) {
    return path ? `${path}.${key}` : key;
  }

  /* Schema problems as facts ({path, rule, …}; sayProblem() puts one into words), from the errors of the validator
     that Ajv generated from the published schema (assets/schema-check.js). */
  function schemaProblems(value) {
    const check = global.ForgeSchemaCheck;
    if (typeof check !== "function") throw new Error("assets/schema-check.js is missing from this page");
    if (check(value)) return [];
    return (check.errors || []).map((error) => {
      const { value: found, path } = locate(value, error.instancePath);
      const params = error.params || {};
      switch (error.keyword) {
        case "type": {
          const expected = Array.isArray(params.type) ? params.type : String(params.type).split(",");
          return { path, rule: "type", expected, actual: typeOf(found) };
        }
        case "const":
          return { path, rule: "const", expected: JSON.stringify(params.allowedValue), actual: JSON.stringify(found) };
        case "enum":
          return { path, rule: "enum", expected: params.allowedValues.join(", "), actual: JSON.stringify(found) };
        case "pattern":
          return { path, rule: "pattern", actual: JSON.stringify(String(found).slice(0, 80)) };
        case "minimum": return { path, rule: "minimum", minimum: params.limit };
        case "minItems": return { path, rule: "minItems", minItems: params.limit };
        case "uniqueItems": return { path, rule: "uniqueItems" };
        case "required": return { path: inside(path, params.missingProperty), rule: "required" };
        case "additionalProperties": return { path: inside(path, params.additionalProperty), rule: "additional" };
        default: return { path, rule: "other", keyword: String(error.keyword) };
      }
    });
  }

  function sayProblem(problem) {
    const where = problem.path || t("the file");
    switch (problem.rule) {
      case "type":
        return t("{where} should be {expected}, but is {actual}",
          { where, expected: either(problem.expected.map(shouldWord)), actual: isWord(problem.actual) });
      case "const":
        return t("{where} should be {expected}, but is {actual}",
          { where, expected: problem.expected, actual: problem.actual });
      case "enum": {
        const expected = t("one of {values}", { values: problem.expected });
        return t("{where} should be {expected}, but is {actual}", { where, expected, actual: problem.actual });
      }
      case "pattern": return t("{where} has an unexpected form: {value}", { where, value: problem.actual });
      case "minimum": return t("{where} should be at least {minimum}", { where, minimum: problem.minimum });
      case "minItems": return t("{where} should have at least {count} item(s)", { where, count: problem.minItems });
      case "uniqueItems": return t("{where} has repeated items", { where });
      case "required": return t("{where} is missing", { where });
      case "additional": return t("{where} is not a field of a verification.json", { where });
      default: return t("{where} breaks the rule “{rule}” of the verification.json schema", { where, rule: problem.keyword });
    }
  }

  // ---------------------------------------------------------------- reading a picked file
  const SIGNATURES = [
    { bytes: [0x89, 0x50, 0x4e, 0x47], kind: "png" },
    { bytes: [0xff, 0xd8, 0xff], kind: "jpeg" },
    { bytes: [0x47, 0x49, 0x46, 0x38], kind: "gif" },
    { bytes: [0x25, 0x50, 0x44, 0x46], kind: "pdf" },
    { bytes: [0x50, 0x4b, 0x03, 0x04], kind: "zip" },
  ];

  function binaryName(kind) {
    switch (kind) {
      case "png": return t("a PNG image");
      case "jpeg": return t("a JPEG image");
      case "gif": return t("a GIF image");
      case "pdf": return t("a PDF document");
      case "zip": return t("a zip archive (perhaps the lab bundle itself)");
      default: return t("a binary file");
    }
  }

  /* A file-level problem: a code (the kind of message) and the facts the message is made from. */
  function fileProblem(code, facts) {
    return { ok: false, code, facts };
  }

  function sniffBinary(bytes) {
    for (const signature of SIGNATURES) {
      if (signature.bytes.every((byte, i) => bytes[i] === byte)) return signature.kind;
    }
    const head = bytes.subarray(0, 4096);
    return head.includes(0) ? "binary" : null;
  }

  /* Size is checked before reading: a file above the bound is never read at all. */
  function checkSize(size, limits) {
    if (size === 0) return fileProblem("empty", { kind: "no-bytes" });
    if (size > limits.maxBytes) return fileProblem("too-large", { kind: "too-large", size });
    return null;
  }

  function parseBytes(bytes) {
    const binary = sniffBinary(bytes);
    if (binary) return fileProblem("not-json", { kind: "binary", binary });
    let text;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch (error) {
      return fileProblem("not-json", { kind: "not-utf8" });
    }
    const trimmed = text.trim();
    if (trimmed === "") return fileProblem("empty", { kind: "blank" });
    let value;
    try {
      value = JSON.parse(text);
    } catch (error) {
      if (trimmed[0] === "{" || trimmed[0] === "[") {
        return fileProblem("malformed-json", { kind: "malformed", ...jsonErrorFacts(String(error.message), text) });
      }
      return fileProblem("not-json", { kind: "plain-text", start: trimmed.slice(0, 40).replace(/\s+/g, " ") });
    }
    return { ok: true, value };
  }

  /* What the browser's JSON.parse message says, as language-free facts: the kind of mistake (one of
     JSON_MISTAKES' codes, or "other") and where it is (line and column, counted from 1), when the message tells.
     Chromium says "… at position 21 (line 1 column 22)" or only "at position 21"; Firefox "at line 1 column 22". */
  const JSON_MISTAKES = [
    ["cut-off", /unexpected end of (JSON input|data)|end of data/i],
    ["property-name", /expected (double-quoted )?property name/i],
    ["after-value", /expected ',' or '\}' after property value/i],
    ["after-item", /expected ',' or '\]' after array element/i],
    ["control-character", /bad control character/i],
    ["open-string", /unterminated string/i],
    ["after-json", /non-whitespace character after JSON/i],
    ["escape", /bad (escaped character|unicode escape)/i],
    ["number", /no number after minus sign|exponent part is missing|unterminated fractional number|missing digits/i],
    ["unexpected", /unexpected (token|character|keyword)|is not valid JSON/i],
  ];

  function jsonErrorFacts(message, text) {
    const found = JSON_MISTAKES.find(([, pattern]) => pattern.test(message));
    const facts = { error: message, mistake: found ? found[0] : "other" };
    const lineColumn = /line (\d+) column (\d+)/i.exec(message);
    const position = /at position (\d+)/i.exec(message);
    if (lineColumn) {
      facts.line = Number(lineColumn[1]);
      facts.column = Number(lineColumn[2]);
    } else if (position) {
      const before = text.slice(0, Number(position[1])).split("\n");
      facts.line = before.length;
      facts.column = before[before.length - 1].length + 1;
    }
    if (position && Number(position[1]) >= text.trimEnd().length) facts.mistake = "cut-off";  // it stopped with the text
    return facts;
  }

  /* The mistake in the page's language, where it is, and the browser's own words when it is not one we know. */
  function sayJsonError(facts) {
    const words = {
      "cut-off": t("the text ends before the JSON does"),
      "property-name": t("a property name in double quotes should come here"),
      "after-value": t("a comma or a closing } should follow the value here"),
      "after-item": t("a comma or a closing ] should follow the list item here"),
      "control-character": t("a string holds a raw line break or tab (JSON writes them \\n and \\t)"),
      "open-string": t("a string is not closed with a double quote"),
      "after-json": t("more text follows where the JSON ends"),
      "escape": t("a backslash escape that JSON does not know"),
      "number": t("a number is not complete"),
      "unexpected": t("a character that JSON does not allow here"),
    };
    const what = words[facts.mistake] || t("the browser's words: {error}", { error: facts.error });
    return facts.line ? t("line {line}, column {column}: {what}", { line: facts.line, column: facts.column, what })
      : what;
  }

  function checkShape(value, course) {
    if (!hasType(value, "object")) return fileProblem("wrong-shape", { kind: "not-object", type: typeOf(value) });
    const looksLike = "kind" in value || "schema_version" in value || "experiment_id" in value;
    if (!looksLike) return fileProblem("wrong-shape", { kind: "no-fields", keys: Object.keys(value).slice(0, 4) });
    const version = value.schema_version;
    if (typeof version === "number" && !course.schema_versions.includes(version)) {
      return fileProblem("unsupported-version", { kind: "version", version });
    }
    const problems = schemaProblems(value);
    if (problems.length) {
      return fileProblem("wrong-shape", { kind: "schema", problems: problems.slice(0, 4), total: problems.length });
    }
    return null;
  }

  /* The title and the message of a file-level problem, in the page's language. */
  function explain(problem, stageNumber, course) {
    const stage = course.stages[stageNumber];
    const facts = problem.facts || {};
    const dir = stage.evidence_dir;
    const number = stage.number;
    const notJson = t("This is not a JSON file");
    switch (facts.kind) {
      case "no-bytes":
        return { title: t("The file is empty"), message: t("It has 0 bytes. Pick the verification.json that " +
          "`forgelab check {number}` wrote into {dir}/.", { number, dir }) };
      case "too-large":
        return { title: t("The file is too large"), message: t("It is {size} KB; this page reads at most {max} KB, " +
          "and a real verification.json is a few KB. Pick the verification.json from {dir}/.",
        { size: Math.ceil(facts.size / 1024), max: Math.round(course.max_bytes / 1024), dir }) };
      case "binary":
        return { title: notJson, message: t("It looks like {what}. Pick the verification.json from {dir}/.",
          { what: binaryName(facts.binary), dir }) };
      case "not-utf8":
        return { title: notJson, message: t("It is not UTF-8 text, so it cannot be a verification.json. " +
          "Pick the file that forgelab wrote.") };
      case "blank":
        return { title: t("The file is empty"), message: t("It contains only blank space. Run " +
          "`forgelab check {number}` again to write a fresh verification.json.", { number }) };
      case "malformed":
        return { title: t("The JSON is malformed"), message: t("The file starts like JSON but cannot be read " +
          "({error}). It may be cut off or edited by hand. Run `forgelab check {number}` again to write a fresh one.",
        { error: sayJsonError(facts), number }) };
      case "plain-text":
        return { title: notJson, message: t("It is plain text that begins with “{start}”. A verification.json " +
          "begins with {brace}. Pick the verification.json from {dir}/.", { start: facts.start, brace: "“{”", dir }) };
      case "not-object":
        return { title: t("This JSON is not a verification.json"), message: t("It is valid JSON, but {what} " +
          "instead of an object with the check results.", { what: isWord(facts.type) }) };
      case "no-fields": {
        const keys = facts.keys.length ? facts.keys.join(", ") : t("no fields");
        return { title: t("This JSON is not a verification.json"), message: t("It is valid JSON, but it has none " +
          "of the fields forgelab writes (it has: {keys}). Pick the verification.json from your evidence folder.",
        { keys }) };
      }
      case "version":
        return { title: t("Schema version not supported"), message: t("This file uses schema version {version}; " +
          "this page reads version {supported}. Use the page that comes with the same course version as your " +
          "workbook, or run the check again with this workbook.",
        { version: facts.version, supported: course.schema_versions.join(", ") }) };
      case "schema": {
        const shown = facts.problems.map(sayProblem).join(t("; "));
        const more = facts.total > facts.problems.length
          ? t(" (and {count} more)", { count: facts.total - facts.problems.length }) : "";
        return { title: t("This JSON is not a complete verification.json"), message: t("Some parts are missing " +
          "or have the wrong form: {problems}{more}. Run the check again instead of editing the file.",
        { problems: shown, more }) };
      }
      case "other-stage": {
        const experiment = checkExperiment({ experiment_id: facts.experiment_id }, stage, course);
        return { title: experiment.title, message: experiment.text };
      }
      case "unreadable":
        return { title: t("The file could not be read"), message: t("The browser could not open it. Pick the " +
          "file again, or copy it somewhere readable first.") };
      default:
        return { title: t("This file could not be checked"), message: t("Something unexpected happened while " +
          "reading it ({error}). Run `forgelab check {number}` and pick the new file.",
        { error: facts.error || problem.code, number }) };
    }
  }

  // ---------------------------------------------------------------- the checks a learner reads
  function targetNote(kind) {
    switch (kind) {
      case "solution":
        return t("This file was produced against the reference solution (target “solution”), not against your " +
          "own forge/. It shows the course works; it does not show that you built the stage.");
      case "fault":
        return t("This file was produced against the fault-lab variant (a reference module with a planted " +
          "defect), not against your own forge/.");
      case "path":
        return t("This file was produced for a submitted workbook (a grader's run), not with the learner target.");
      default:
        return null;
    }
  }

  /* A detail written by forgelab (in the language it spoke), ended as a sentence (no doubled full stop). */
  function sentence(text) {
    const trimmed = String(text).trim();
    if (/[.!?…:。！？：]$/.test(trimmed)) return trimmed;
    return trimmed + (/[\u3000-\u9fff\uff00-\uffef]$/.test(trimmed) ? "。" : ".");
  }

  function item(id, status, title, text, details) {
    return { id, status, title, text, details: details || [] };
  }

  function checkExperiment(doc, stage, course) {
    if (doc.experiment_id === stage.experiment_id) {
      return item("experiment", "pass", t("Experiment matches this stage"),
        t("The file is the evidence of {experiment}.", { experiment: stage.experiment_id }));
    }
    const owner = Object.values(course.stages).find((s) => s.experiment_id === doc.experiment_id);
    if (owner) {
      const result = item("experiment", "fail", t("This file belongs to Stage {number}", { number: owner.number }),
        t("It is the evidence of Stage {owner} · {title} ({experiment}), not of Stage {number}. " +
          "Open the Stage {owner} page and pick it there.",
        { owner: owner.number, title: owner.title, experiment: owner.experiment_id, number: stage.number }));
      result.link = { href: owner.page, text: t("Go to Stage {number} · {title}", { number: owner.number, title: owner.title }) };
      result.belongsTo = owner.number;
      return result;
    }
    return item("experiment", "fail", t("This file belongs to no stage of this course"),
      t("Its experiment id is {experiment}; this course has no such experiment. " +
        "It may come from another course version: use the page that matches your workbook.",
      { experiment: doc.experiment_id }));
  }

  function outcomeWord(outcome) {
    switch (outcome) {
      case "passed": return t("passed");
      case "failed": return t("failed");
      case "error": return t("error");
      case "skipped": return t("skipped");
      case "timeout": return t("timeout");
      case "not_run": return t("not run");
      default: return String(outcome).replace(/_/g, " ");
    }
  }

  function checkRequiredTests(doc, stage) {
    const rows = new Map();
    for (const row of doc.tests) {
      if (!rows.has(row.name)) rows.set(row.name, []);
      rows.get(row.name).push(row);
    }
    const failing = [];
    for (const name of stage.required_tests) {
      const found = rows.get(name) || [];
      const bad = found.find((row) => row.outcome !== "passed");
      if (found.length === 0) {
        failing.push(t("{name} — not in the file: it did not run (were the stage tests edited?)", { name }));
      } else if (bad && bad.cause) {
        failing.push(t("{name} — {outcome}: {cause}", { name, outcome: outcomeWord(bad.outcome), cause: bad.cause }));
      } else if (bad) {
        failing.push(t("{name}: {outcome}", { name, outcome: outcomeWord(bad.outcome) }));
      }
    }
    const total = stage.required_tests.length;
    if (failing.length === 0) {
      return item("required-tests", "pass", t("Every required test passed"),
        t("All {total} required tests of this stage passed.", { total }));
    }
    return item("required-tests", "fail", t("{failing} of {total} required tests do not pass yet",
      { failing: failing.length, total }),
    t("Fix your module `{module}` until these pass, then run `forgelab check {number}` again:",
      { module: stage.module, number: stage.number }), failing);
  }

  function checkFaultLab(doc, stage) {
    const lab = doc.fault_lab;
    switch (lab.status) {
      case "fixed":
        return item("fault-lab", "pass", t("Fault lab fixed"),
          t("The planted defect is fixed: {detail}", { detail: sentence(lab.detail) }));
      case "not_started":
        return item("fault-lab", "fail", t("Fault lab not started"),
          t("Start it with `forgelab fault start {number}`, find the defect in the lab copy of {file}, fix it there " +
            "and check again.", { number: stage.number, file: lab.fault_file }));
      case "broken":
        return item("fault-lab", "fail", t("Fault lab not fixed yet"),
          t("The lab copy still fails: {detail}", { detail: sentence(lab.detail) }));
      default:
        return item("fault-lab", "fail", t("Fault lab could not be checked"), sentence(lab.detail));
    }
  }

  /* The second fact of the fault lab: the learner's own diagnosis, judged with the course's answer key. */
  function checkDiagnosis(doc, stage) {
    const diagnosis = doc.fault_lab.diagnosis;
    switch (diagnosis.status) {
      case "right": {
        const words = diagnosis.explanation
          ? [t("In your words: “{words}”", { words: diagnosis.explanation })] : [];
        if (typeof diagnosis.stated_after_fix === "boolean") {
          words.push(diagnosis.stated_after_fix ? t("Stated after the repair.") : t("Stated before the repair."));
        }
        return item("diagnosis", "pass", t("Fault lab diagnosed"),
          t("Your diagnosis is right: {detail}", { detail: sentence(diagnosis.detail) }), words);
      }
      case "not_right":
        return item("diagnosis", "fail", t("Fault lab diagnosis not right yet"),
          t("{detail} Look again, then state it with `forgelab fault diagnose {number}`.",
            { detail: sentence(diagnosis.detail), number: stage.number }));
      default:
        return item("diagnosis", "fail", t("Fault lab diagnosis not stated"),
          t("Say what is wrong in the lab before you repair it: `forgelab fault diagnose {number}` (or part 7 of " +
            "the notebook) asks which test shows the defect, where it lies and what it is.", { number: stage.number }));
    }
  }

  function transferTitle(status) {
    switch (status) {
      case "passed": return t("Transfer challenge passed");
      case "missing": return t("Transfer test file missing");
      case "not_written": return t("Transfer test not written yet");
      case "failed": return t("Transfer test fails");
      case "error": return t("Transfer test could not run");
      case "cannot_tell": return t("Transfer test cannot tell right from wrong");
      default: return t("Transfer challenge: {status}", { status: String(status).replace(/_/g, " ") });
    }
  }

  function checkTransfer(doc) {
    const transfer = doc.transfer;
    const status = transfer.status === "passed" ? "pass" : "fail";
    return item("transfer", status, transferTitle(transfer.status),
      t("{file}: {detail}", { file: transfer.file, detail: sentence(transfer.detail) }));
  }

  function checkDesignAnswer(doc) {
    const answer = doc.design_answer;
    if (answer.status === "present") {
      return item("design-answer", "pass", t("Design answer present"),
        t("{words} words in {file}.", { words: answer.words, file: answer.file }));
    }
    const title = answer.status === "too_short" ? t("Design answer too short") : t("No design answer yet");
    return item("design-answer", "fail", title, sentence(answer.detail));
  }

  function checkTestDigests(doc, stage, course) {
    const inFile = new Map(doc.digests.tests.map((entry) => [entry.path, entry.sha256]));
    const edited = [];
    for (const published of stage.test_digests) {
      const actual = inFile.get(published.path);
      if (actual === undefined) edited.push(t("{path} — not listed in the file", { path: published.path }));
      else if (actual !== published.sha256) {
        edited.push(t("{path} — yours {yours}…, published {published}…",
          { path: published.path, yours: String(actual).slice(0, 12), published: published.sha256.slice(0, 12) }));
      }
    }
    const version = course.course_version;
    if (edited.length === 0) {
      return item("test-digests", "pass", t("Stage tests are the published ones"),
        t("The test files you were checked with match course version {version}.", { version }));
    }
    const produced = doc.generated_by.course_version;
    const versionNote = produced !== version
      ? " " + t("The file was produced with course version {produced}; this page publishes version {version}.",
        { produced, version })
      : "";
    return item("test-digests", "fail", t("Stage tests were edited"),
      t("The file was produced with stage tests that differ from the published course version, so it proves " +
        "nothing about the real tests. Restore the original test file and run `forgelab check {number}` again.",
      { number: stage.number }) + versionNote, edited);
  }

  /* seal: what recompute() found for this document — the digest recomputed here, or why there is none. */
  function checkIntegrity(doc, seal, stage) {
    if (!seal || !seal.digest) {
      return item("integrity", "fail", t("Integrity cannot be checked in this browser"),
        t("This page cannot compute SHA-256 digests here: a browser offers its Web Crypto (crypto.subtle) only to " +
          "a page opened as a file on this computer, from 127.0.0.1 or localhost, or over https. Open it with " +
          "`forgelab page {number}` (the copy in your workbook's page/ folder, as a file) and pick the file again. " +
          "Until then the self-check cannot pass.", { number: stage.number }));
    }
    const recomputed = seal.digest;
    if (recomputed === doc.integrity.digest) {
      return item("integrity", "pass", t("File unchanged since forgelab wrote it"),
        t("The integrity digest recomputed in this browser matches the one in the file."));
    }
    return item("integrity", "fail", t("The file was edited by hand"),
      t("The integrity digest recomputed here ({recomputed}…) does not match the one in the file ({stored}…): " +
        "its content changed after forgelab wrote it. Run the check again instead of editing verification.json.",
      { recomputed: recomputed.slice(0, 12), stored: String(doc.integrity.digest).slice(0, 12) }));
  }

  function skipped(id, title, owner) {
    return item(id, "skip", title, owner
      ? t("Not checked here: open the Stage {number} page, where this file belongs.", { number: owner })
      : t("Not checked: this file belongs to no stage of this course."));
  }

  /* Every check for one parsed, well-formed document on one stage's page (seal: what recompute() found for it). */
  function evaluate(doc, stageNumber, course, fileName, seal) {
    const stage = course.stages[stageNumber];
    const items = [
      item("schema", "pass", t("Schema version supported"),
        t("The file uses schema version {version}, which this page reads.", { version: doc.schema_version })),
    ];
    const experiment = checkExperiment(doc, stage, course);
    items.push(experiment);
    if (experiment.status === "pass") {
      items.push(checkRequiredTests(doc, stage), checkFaultLab(doc, stage), checkDiagnosis(doc, stage),
        checkTransfer(doc), checkDesignAnswer(doc), checkTestDigests(doc, stage, course));
    } else {
      const notChecked = [["required-tests", t("Required tests")], ["fault-lab", t("Fault lab")],
        ["diagnosis", t("Fault lab diagnosis")], ["transfer", t("Transfer challenge")], ["design-answer", t("Design answer")],
        ["test-digests", t("Stage test digests")]];
      for (const [id, title] of notChecked) items.push(skipped(id, title, experiment.belongsTo));
    }
    items.push(checkIntegrity(doc, seal, stage));
    const note = targetNote(doc.target.kind);
    if (note) items.push(item("target", "note", t("Target: {name}", { name: doc.target.name }), note));
    const failing = items.filter((entry) => entry.status === "fail");
    return {
      fileName,
      stage: stageNumber,
      forThisStage: experiment.status === "pass",
      passed: failing.length === 0,
      failingCount: failing.length,
      checkCount: items.filter((entry) => entry.status === "pass" || entry.status === "fail").length,
      target: { name: doc.target.name, kind: doc.target.kind },
      checkedAt: doc.checked_at,
      items,
    };
  }

  /* The whole path from picked bytes to a report (with the document it came from and its seal) or one file-level
     problem: a promise, since the browser computes digests asynchronously. */
  async function checkBytes(bytes, fileName, stageNumber, course) {
    const sized = checkSize(bytes.length, { maxBytes: course.max_bytes });
    if (sized) return sized;
    const parsed = parseBytes(bytes);
    if (!parsed.ok) return parsed;
    const shape = checkShape(parsed.value, course);
    if (shape) return shape;
    const seal = await recompute(parsed.value);
    return { ok: true, document: parsed.value, seal, report: evaluate(parsed.value, stageNumber, course, fileName, seal) };
  }

  global.ForgeVerify = {
    t, sha256Hex, sha256Bytes, canonicalJson, integrityDigest, recompute, schemaProblems, sayProblem,
    checkSize, parseBytes, checkShape, explain, evaluate, checkBytes,
  };
})(globalThis);
