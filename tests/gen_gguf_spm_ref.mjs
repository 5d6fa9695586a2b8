// gen_gguf_spm_ref.mjs -- reference ids of the SentencePiece GGUF fixture (tests/gen_gguf_spm.py's
// tinyllama-spm.gguf and the tokenizer.json it was made from, tinyllama-spm.json.gz), once; the
// files it writes are committed, so the tests need neither node, npm nor llama.cpp. Not part of the
// build or the tests.
//
// Run (node 18 or later, from the repository root; the packages are MIT / Apache-2.0):
//   mkdir -p /tmp/tokjref && (cd /tmp/tokjref && npm install @lenml/tokenizers@3.7.2 @anush008/tokenizers@0.6.0)
//   mkdir -p /tmp/nlc && (cd /tmp/nlc && npm install node-llama-cpp@3.21.1)
//   TOKJREF=/tmp/tokjref NLC=/tmp/nlc node tests/gen_gguf_spm_ref.mjs
//
// The texts: every text of tests/ref/tokjson/llama2_ids.txt (accents, emoji, digits, CJK, code,
// leading spaces, newlines, special tokens inline ...) and a few with the fixture's added tokens.
// It writes, in tests/tokref.h's format (text, tab, ids):
//   tests/ref/gguf/tinyllama-spm_ids.txt       the tokenizer.json's ids, BOS added: Hugging Face's
//       tokenizers (npm @anush008/tokenizers, the Rust library) and @lenml/tokenizers (its
//       JavaScript port), which agree but where a comment says otherwise (the library's ids kept)
//   tests/ref/gguf/tinyllama-spm_decoded.txt   the library's decoding of those ids, special tokens skipped
//   tests/ref/gguf/tinyllama-spm_llamacpp.txt  llama.cpp's ids on the GGUF file (node-llama-cpp's
//       bundled llama.cpp: tokenize(text, special tokens parsed), after the BOS the file asks for)
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import {createRequire} from "node:module";

const ROOT = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const require = createRequire(path.join(process.env.TOKJREF || "/tmp/tokjref", "node_modules", "x.js"));
const lenml = require("@lenml/tokenizers");
const {Tokenizer} = require("@anush008/tokenizers");
const NLC = process.env.NLC || "/tmp/nlc";
const {getLlama} = await import(path.join(NLC, "node_modules/node-llama-cpp/dist/index.js"));

function unesc(s) {
  let o = "";
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== "\\") { o += s[i]; continue; }
    const c = s[++i];
    if (c === "n") o += "\n";
    else if (c === "r") o += "\r";
    else if (c === "t") o += "\t";
    else if (c === "x") { o += String.fromCharCode(parseInt(s.substr(i + 1, 2), 16)); i += 2; }
    else o += c;
  }
  return o;
}
function esc(s) {
  let o = "";
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === "\\") o += "\\\\";
    else if (ch === "\n") o += "\\n";
    else if (ch === "\r") o += "\\r";
    else if (ch === "\t") o += "\\t";
    else if (c < 0x20 || c === 0x7f) o += "\\x" + c.toString(16).padStart(2, "0");
    else o += ch;
  }
  return o.startsWith("#") ? "\\x23" + o.slice(1) : o;
}

const texts = [];
const seen = new Set();
const add = (s) => { if (!seen.has(s)) { seen.add(s); texts.push(s); } };
for (const line of fs.readFileSync(path.join(ROOT, "tests/ref/tokjson/llama2_ids.txt"), "utf8").split("\n")) {
  if (line === "" || line.startsWith("#")) continue;
  add(unesc(line.slice(0, line.indexOf("\t"))));
}
["<|im_start|>user\nHello!<|im_start|>", "<|user|>\nWhat is a transformer?</s>", "a<|user|>b", " <|user|> x ",
  "<|im_start|><|user|>", "<|im_star", "Ünïcödé 123 🤖 你好", "   three leading spaces", "tab\tand\nnewline"].forEach(add);

const json = zlib.gunzipSync(fs.readFileSync(path.join(ROOT, "tests/ref/gguf/tinyllama-spm.json.gz"))).toString("utf8");
const js = lenml.TokenizerLoader.fromPreTrained({tokenizerJSON: JSON.parse(json), tokenizerConfig: {}});
const rust = Tokenizer.fromString(json);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath: path.join(ROOT, "tests/ref/gguf/tinyllama-spm.gguf")});

let ids = "", dec = "", cpp = "", left = 0, leftDec = 0, leftCpp = 0;
for (const s of texts) {
  const b = Array.from((await rust.encode(s, null, {addSpecialTokens: true})).getIds());
  const a = js.encode(s, {add_special_tokens: true});
  if (a.join(" ") !== b.join(" ")) {
    left++;
    ids += `# the JavaScript port gives ${a.join(" ")}; Hugging Face's own tokenizers:\n`;
  }
  ids += esc(s) + "\t" + b.join(" ") + "\n";
  const db = await rust.decode(b, true);
  const da = b.length ? js.decode(b, {skip_special_tokens: true}) : "";
  if (da !== db) {
    leftDec++;
    dec += `# the JavaScript port decodes to ${esc(da)}; Hugging Face's own tokenizers:\n`;
  }
  dec += esc(db) + "\t" + b.join(" ") + "\n";
  const c = [model.tokens.bos, ...model.tokenize(s, true)];
  if (c.join(" ") !== b.join(" ")) {
    leftCpp++;
    cpp += `# tokenizer.json's ids: ${b.join(" ")}; llama.cpp's:\n`;
    console.log(`llama.cpp differs on "${esc(s)}":\n  hf  ${b.join(" ")}\n  cpp ${c.join(" ")}`);
  }
  cpp += esc(s) + "\t" + c.join(" ") + "\n";
}
const head = (what) => `# tinyllama-spm ${what}: made by tests/gen_gguf_spm_ref.mjs`;
fs.writeFileSync(path.join(ROOT, "tests/ref/gguf/tinyllama-spm_ids.txt"),
  head("tokenizer.json's ids") + ` with @anush008/tokenizers@0.6.0 and @lenml/tokenizers@3.7.2 (the two agree but on ${left} texts, each after a comment: there Hugging Face's own ids)\n` + ids);
fs.writeFileSync(path.join(ROOT, "tests/ref/gguf/tinyllama-spm_decoded.txt"),
  head("decoded ids") + ` with @anush008/tokenizers@0.6.0 (the port differs on ${leftDec})\n` + dec);
fs.writeFileSync(path.join(ROOT, "tests/ref/gguf/tinyllama-spm_llamacpp.txt"),
  head("llama.cpp's ids on the GGUF file") + ` with node-llama-cpp@3.21.1 (BOS, then tokenize(text, true)); it differs from tokenizer.json on ${leftCpp} texts, each after a comment\n` + cpp);
console.log(`${texts.length} texts; the port differs on ${left} (decoding ${leftDec}); llama.cpp differs on ${leftCpp}`);
await model.dispose();
process.exit(0);
