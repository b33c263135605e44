/* Forge Workbook — reading and checking a verification.json, entirely in this browser.
 *
 * Pure logic, no DOM: SHA-256, the canonical JSON form that forgelab seals, a small JSON Schema
 * validator for the published schema, the classification of a picked file, and the checks that
 * the stage page explains. Nothing here makes a network request.
 */
(function (global) {
  "use strict";

  // ---------------------------------------------------------------- SHA-256 (FIPS 180-4)
  const K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ]);

  function sha256Bytes(bytes) {
    const bitLength = bytes.length * 8;
    const padded = new Uint8Array(((bytes.length + 9 + 63) >> 6) << 6);
    padded.set(bytes);
    padded[bytes.length] = 0x80;
    const view = new DataView(padded.buffer);
    view.setUint32(padded.length - 8, Math.floor(bitLength / 0x100000000));
    view.setUint32(padded.length - 4, bitLength >>> 0);
    const h = new Uint32Array([
      0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ]);
    const w = new Uint32Array(64);
    const rotr = (x, n) => (x >>> n) | (x << (32 - n));
    for (let offset = 0; offset < padded.length; offset += 64) {
      for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + i * 4);
      for (let i = 16; i < 64; i++) {
        const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
        const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
        w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
      }
      let [a, b, c, d, e, f, g, hh] = h;
      for (let i = 0; i < 64; i++) {
        const s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
        const choice = (e & f) ^ (~e & g);
        const t1 = (hh + s1 + choice + K[i] + w[i]) >>> 0;
        const s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
        const majority = (a & b) ^ (a & c) ^ (b & c);
        const t2 = (s0 + majority) >>> 0;
        hh = g; g = f; f = e; e = (d + t1) >>> 0;
        d = c; c = b; b = a; a = (t1 + t2) >>> 0;
      }
      h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
    }
    return Array.from(h, (x) => x.toString(16).padStart(8, "0")).join("");
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

  // ---------------------------------------------------------------- JSON Schema (the subset we publish)
  function describeType(value) {
    if (value === null) return "null";
    if (Array.isArray(value)) return "a list";
    if (typeof value === "object") return "an object";
    if (typeof value === "string") return "text";
    if (typeof value === "boolean") return "true/false";
    return Number.isInteger(value) ? "a whole number" : "a number";
  }

  const TYPE_WORDS = {
    object: "an object", array: "a list", string: "text", integer: "a whole number",
    number: "a number", boolean: "true or false", null: "null",
  };

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

  function validate(schema, value, root, path, problems) {
    const where = path || "the file";
    if (problems.length >= 20) return;
    if (schema.$ref) {
      const target = schema.$ref.replace(/^#\//, "").split("/").reduce((node, key) => node[key], root);
      validate(target, value, root, path, problems);
      return;
    }
    if (schema.type !== undefined) {
      const types = Array.isArray(schema.type) ? schema.type : [schema.type];
      if (!types.some((type) => hasType(value, type))) {
        problems.push(`${where} should be ${types.map((t) => TYPE_WORDS[t]).join(" or ")}, but is ${describeType(value)}`);
        return;
      }
    }
    if ("const" in schema && value !== schema.const) {
      problems.push(`${where} should be ${JSON.stringify(schema.const)}, but is ${JSON.stringify(value)}`);
    }
    if (schema.enum && !schema.enum.includes(value)) {
      problems.push(`${where} should be one of ${schema.enum.join(", ")}, but is ${JSON.stringify(value)}`);
    }
    if (typeof value === "string" && schema.pattern && !new RegExp(schema.pattern).test(value)) {
      problems.push(`${where} has an unexpected form: ${JSON.stringify(value.slice(0, 80))}`);
    }
    if (typeof value === "number" && schema.minimum !== undefined && value < schema.minimum) {
      problems.push(`${where} should be at least ${schema.minimum}`);
    }
    if (Array.isArray(value)) {
      if (schema.minItems !== undefined && value.length < schema.minItems) {
        problems.push(`${where} should have at least ${schema.minItems} item(s)`);
      }
      if (schema.uniqueItems && new Set(value.map(canonicalJson)).size !== value.length) {
        problems.push(`${where} has repeated items`);
      }
      if (schema.items) value.forEach((item, i) => validate(schema.items, item, root, `${path}[${i}]`, problems));
    }
    if (hasType(value, "object")) {
      const prefix = path ? path + "." : "";
      for (const key of schema.required || []) {
        if (!(key in value)) problems.push(`${prefix}${key} is missing`);
      }
      const properties = schema.properties || {};
      for (const key of Object.keys(value).sort(byCodePoint)) {
        if (key in properties) validate(properties[key], value[key], root, prefix + key, problems);
        else if (schema.additionalProperties === false) problems.push(`${prefix}${key} is not a field of a verification.json`);
      }
    }
  }

  function schemaProblems(schema, value) {
    const problems = [];
    validate(schema, value, schema, "", problems);
    return problems;
  }

  // ---------------------------------------------------------------- reading a picked file
  const SIGNATURES = [
    { bytes: [0x89, 0x50, 0x4e, 0x47], name: "a PNG image" },
    { bytes: [0xff, 0xd8, 0xff], name: "a JPEG image" },
    { bytes: [0x47, 0x49, 0x46, 0x38], name: "a GIF image" },
    { bytes: [0x25, 0x50, 0x44, 0x46], name: "a PDF document" },
    { bytes: [0x50, 0x4b, 0x03, 0x04], name: "a zip archive (perhaps the lab bundle itself)" },
  ];

  function fileProblem(code, title, message) {
    return { ok: false, code, title, message };
  }

  function sniffBinary(bytes) {
    for (const signature of SIGNATURES) {
      if (signature.bytes.every((byte, i) => bytes[i] === byte)) return signature.name;
    }
    const head = bytes.subarray(0, 4096);
    return head.includes(0) ? "a binary file" : null;
  }

  /* Size is checked before reading: a file above the bound is never read at all. */
  function checkSize(size, limits) {
    if (size === 0) {
      return fileProblem("empty", "The file is empty",
        `It has 0 bytes. Pick the verification.json that \`forgelab check ${limits.stage}\` wrote into ${limits.evidenceDir}/.`);
    }
    if (size > limits.maxBytes) {
      const kb = Math.ceil(size / 1024);
      return fileProblem("too-large", "The file is too large",
        `It is ${kb} KB; this page reads at most ${Math.round(limits.maxBytes / 1024)} KB, and a real verification.json is a few KB. ` +
        `Pick the verification.json from ${limits.evidenceDir}/.`);
    }
    return null;
  }

  function parseBytes(bytes, limits) {
    const binary = sniffBinary(bytes);
    if (binary) {
      return fileProblem("not-json", "This is not a JSON file",
        `It looks like ${binary}. Pick the verification.json from ${limits.evidenceDir}/.`);
    }
    let text;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch (error) {
      return fileProblem("not-json", "This is not a JSON file",
        "It is not UTF-8 text, so it cannot be a verification.json. Pick the file that forgelab wrote.");
    }
    const trimmed = text.trim();
    if (trimmed === "") {
      return fileProblem("empty", "The file is empty",
        `It contains only blank space. Run \`forgelab check ${limits.stage}\` again to write a fresh verification.json.`);
    }
    let value;
    try {
      value = JSON.parse(text);
    } catch (error) {
      if (trimmed[0] === "{" || trimmed[0] === "[") {
        return fileProblem("malformed-json", "The JSON is malformed",
          `The file starts like JSON but cannot be read (${error.message}). It may be cut off or edited by hand. ` +
          `Run \`forgelab check ${limits.stage}\` again to write a fresh one.`);
      }
      const start = trimmed.slice(0, 40).replace(/\s+/g, " ");
      return fileProblem("not-json", "This is not a JSON file",
        `It is plain text that begins with “${start}”. A verification.json begins with “{”. ` +
        `Pick the verification.json from ${limits.evidenceDir}/.`);
    }
    return { ok: true, value };
  }

  function checkShape(value, course) {
    if (!hasType(value, "object")) {
      return fileProblem("wrong-shape", "This JSON is not a verification.json",
        `It is valid JSON, but ${describeType(value)} instead of an object with the check results.`);
    }
    const looksLike = "kind" in value || "schema_version" in value || "experiment_id" in value;
    if (!looksLike) {
      const keys = Object.keys(value).slice(0, 4).join(", ") || "no fields";
      return fileProblem("wrong-shape", "This JSON is not a verification.json",
        `It is valid JSON, but it has none of the fields forgelab writes (it has: ${keys}). ` +
        "Pick the verification.json from your evidence folder.");
    }
    const version = value.schema_version;
    if (typeof version === "number" && !course.schema_versions.includes(version)) {
      return fileProblem("unsupported-version", "Schema version not supported",
        `This file uses schema version ${version}; this page reads version ${course.schema_versions.join(", ")}. ` +
        "Use the page that comes with the same course version as your workbook, or run the check again with this workbook.");
    }
    const problems = schemaProblems(course.schema, value);
    if (problems.length) {
      const shown = problems.slice(0, 4).join("; ");
      const more = problems.length > 4 ? ` (and ${problems.length - 4} more)` : "";
      return fileProblem("wrong-shape", "This JSON is not a complete verification.json",
        `Some parts are missing or have the wrong form: ${shown}${more}. ` +
        "Run the check again instead of editing the file.");
    }
    return null;
  }

  // ---------------------------------------------------------------- the checks a learner reads
  const TARGET_NOTES = {
    solution: "This file was produced against the reference solution (target “solution”), not against your own forge/. It shows the course works; it does not show that you built the stage.",
    fault: "This file was produced against the fault-lab variant (a reference module with a planted defect), not against your own forge/.",
    path: "This file was produced for a submitted workbook (a grader's run), not with the learner target.",
  };

  /* A detail written by forgelab, ended as a sentence (no doubled full stop). */
  function sentence(text) {
    const trimmed = String(text).trim();
    return /[.!?…:]$/.test(trimmed) ? trimmed : trimmed + ".";
  }

  function item(id, status, title, text, details) {
    return { id, status, title, text, details: details || [] };
  }

  function checkExperiment(doc, stage, course) {
    if (doc.experiment_id === stage.experiment_id) {
      return item("experiment", "pass", "Experiment matches this stage",
        `The file is the evidence of ${stage.experiment_id}.`);
    }
    const owner = Object.values(course.stages).find((s) => s.experiment_id === doc.experiment_id);
    if (owner) {
      const result = item("experiment", "fail", `This file belongs to Stage ${owner.number}`,
        `It is the evidence of Stage ${owner.number} · ${owner.title} (${owner.experiment_id}), not of Stage ${stage.number}. ` +
        `Open the Stage ${owner.number} page and pick it there.`);
      result.link = { href: owner.page, text: `Go to Stage ${owner.number} · ${owner.title}` };
      result.belongsTo = owner.number;
      return result;
    }
    return item("experiment", "fail", "This file belongs to no stage of this course",
      `Its experiment id is ${doc.experiment_id}; this course has no such experiment. ` +
      "It may come from another course version: use the page that matches your workbook.");
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
      if (found.length === 0) failing.push(`${name} — not in the file: it did not run (were the stage tests edited?)`);
      else if (bad) failing.push(`${name} — ${bad.outcome.replace("_", " ")}${bad.cause ? ": " + bad.cause : ""}`);
    }
    const total = stage.required_tests.length;
    if (failing.length === 0) {
      return item("required-tests", "pass", "Every required test passed", `All ${total} required tests of this stage passed.`);
    }
    return item("required-tests", "fail", `${failing.length} of ${total} required tests do not pass yet`,
      `Fix your module \`${stage.module}\` until these pass, then run \`forgelab check ${stage.number}\` again:`, failing);
  }

  function checkFaultLab(doc, stage) {
    const lab = doc.fault_lab;
    switch (lab.status) {
      case "fixed":
        return item("fault-lab", "pass", "Fault lab fixed", `The planted defect is fixed: ${sentence(lab.detail)}`);
      case "not_started":
        return item("fault-lab", "fail", "Fault lab not started",
          `Start it with \`forgelab fault start ${stage.number}\`, find the defect in the lab copy of ${lab.fault_file}, fix it there and check again.`);
      case "broken":
        return item("fault-lab", "fail", "Fault lab not fixed yet", `The lab copy still fails: ${sentence(lab.detail)}`);
      default:
        return item("fault-lab", "fail", "Fault lab could not be checked", sentence(lab.detail));
    }
  }

  function checkTransfer(doc) {
    const transfer = doc.transfer;
    const texts = {
      passed: ["pass", "Transfer challenge passed"],
      missing: ["fail", "Transfer test file missing"],
      not_written: ["fail", "Transfer test not written yet"],
      failed: ["fail", "Transfer test fails"],
      error: ["fail", "Transfer test could not run"],
      cannot_tell: ["fail", "Transfer test cannot tell right from wrong"],
    };
    const known = texts[transfer.status];
    const [status, title] = known || ["fail", `Transfer challenge ${String(transfer.status).replace(/_/g, " ")}`];
    return item("transfer", status, title, `${transfer.file}: ${sentence(transfer.detail)}`);
  }

  function checkDesignAnswer(doc) {
    const answer = doc.design_answer;
    if (answer.status === "present") {
      return item("design-answer", "pass", "Design answer present", `${answer.words} words in ${answer.file}.`);
    }
    const title = answer.status === "too_short" ? "Design answer too short" : "No design answer yet";
    return item("design-answer", "fail", title, sentence(answer.detail));
  }

  function checkTestDigests(doc, stage, course) {
    const inFile = new Map(doc.digests.tests.map((entry) => [entry.path, entry.sha256]));
    const edited = [];
    for (const published of stage.test_digests) {
      const actual = inFile.get(published.path);
      if (actual === undefined) edited.push(`${published.path} — not listed in the file`);
      else if (actual !== published.sha256) {
        edited.push(`${published.path} — yours ${String(actual).slice(0, 12)}…, published ${published.sha256.slice(0, 12)}…`);
      }
    }
    if (edited.length === 0) {
      return item("test-digests", "pass", "Stage tests are the published ones",
        `The test files you were checked with match course version ${course.course_version}.`);
    }
    const produced = doc.generated_by.course_version;
    const versionNote = produced !== course.course_version
      ? ` The file was produced with course version ${produced}; this page publishes version ${course.course_version}.`
      : "";
    return item("test-digests", "fail", "Stage tests were edited",
      "The file was produced with stage tests that differ from the published course version, so it proves nothing about the real tests. " +
      `Restore the original test file and run \`forgelab check ${stage.number}\` again.${versionNote}`, edited);
  }

  function checkIntegrity(doc) {
    const recomputed = integrityDigest(doc);
    if (recomputed === doc.integrity.digest) {
      return item("integrity", "pass", "File unchanged since forgelab wrote it",
        "The integrity digest recomputed in this browser matches the one in the file.");
    }
    return item("integrity", "fail", "The file was edited by hand",
      `The integrity digest recomputed here (${recomputed.slice(0, 12)}…) does not match the one in the file ` +
      `(${doc.integrity.digest.slice(0, 12)}…): its content changed after forgelab wrote it. ` +
      "Run the check again instead of editing verification.json.");
  }

  function skipped(id, title, owner) {
    return item(id, "skip", title, owner
      ? `Not checked here: open the Stage ${owner} page, where this file belongs.`
      : "Not checked: this file belongs to no stage of this course.");
  }

  /* Every check for one parsed, well-formed document on one stage's page. */
  function evaluate(doc, stageNumber, course, fileName) {
    const stage = course.stages[stageNumber];
    const items = [
      item("schema", "pass", "Schema version supported",
        `The file uses schema version ${doc.schema_version}, which this page reads.`),
    ];
    const experiment = checkExperiment(doc, stage, course);
    items.push(experiment);
    if (experiment.status === "pass") {
      items.push(checkRequiredTests(doc, stage), checkFaultLab(doc, stage), checkTransfer(doc),
        checkDesignAnswer(doc), checkTestDigests(doc, stage, course));
    } else {
      for (const [id, title] of [["required-tests", "Required tests"], ["fault-lab", "Fault lab"],
        ["transfer", "Transfer challenge"], ["design-answer", "Design answer"], ["test-digests", "Stage test digests"]]) {
        items.push(skipped(id, title, experiment.belongsTo));
      }
    }
    items.push(checkIntegrity(doc));
    if (TARGET_NOTES[doc.target.kind]) {
      items.push(item("target", "note", `Target: ${doc.target.name}`, TARGET_NOTES[doc.target.kind]));
    }
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

  /* The whole path from picked bytes to a report or one file-level problem. */
  function checkBytes(bytes, fileName, stageNumber, course) {
    const stage = course.stages[stageNumber];
    const limits = { stage: stage.number, evidenceDir: stage.evidence_dir, maxBytes: course.max_bytes };
    const sized = checkSize(bytes.length, limits);
    if (sized) return sized;
    const parsed = parseBytes(bytes, limits);
    if (!parsed.ok) return parsed;
    const shape = checkShape(parsed.value, course);
    if (shape) return shape;
    return { ok: true, report: evaluate(parsed.value, stageNumber, course, fileName) };
  }

  global.ForgeVerify = {
    sha256Hex, sha256Bytes, canonicalJson, integrityDigest, schemaProblems,
    checkSize, parseBytes, checkShape, evaluate, checkBytes,
  };
})(globalThis);
