// gen_gguf_llamacpp_ref.mjs -- llama.cpp's own reading of the GPT-2 GGUF fixture, once; the files
// it writes are committed, so the tests need neither node nor llama.cpp. Not part of the build or
// the tests.
//
// Run (node 18 or later, from the repository root; node-llama-cpp is MIT and bundles llama.cpp's
// prebuilt CPU binaries):
//   mkdir -p /tmp/nlc && (cd /tmp/nlc && npm install node-llama-cpp@3.21.1)
//   NLC=/tmp/nlc node tests/gen_gguf_llamacpp_ref.mjs
// (NODE_PATH does not reach ES modules: the script imports node-llama-cpp from $NLC/node_modules.)
//
// For tests/ref/gguf/gpt2-tiny-f32.gguf and each sentence of tests/ref/hub/cases.txt's gpt2-tiny
// lines (and llama-gqa2, qwen2-f16, qwen3-sharded, llama3-bf16.gguf with tests/gen_llama_ref.py's sentences,
// into llama-cpp/NAME/sN: Llama's Q/K rows as llama.cpp's converter permutes them), llama.cpp tokenizes the sentence (tokenizer.ggml.*, pre-tokenizer gpt-2) and evaluates it
// on the CPU with an F32 key/value cache; for every position it gives the next token's
// probabilities at temperature 1 with no top-k, top-p or min-p cut. Writes
//   tests/ref/gguf/llama-cpp/sN/ids.txt    llama.cpp's token ids, one a line
//   tests/ref/gguf/llama-cpp/sN/pred.npy   float32 [L, V]: the probabilities
// test_gguf_model compares Stepformer's ids (equal) and pred (within 5e-4: llama.cpp computes GELU
// through a half-precision table and keeps some sums in F16, so it is not bit-exact with float32).
import fs from "node:fs";
import path from "node:path";

const NLC = process.env.NLC || "/tmp/nlc";
const {getLlama} = await import(path.join(NLC, "node_modules/node-llama-cpp/dist/index.js"));
const ROOT = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const OUT = path.join(ROOT, "tests/ref/gguf/llama-cpp");

function npy(rows) { // float32 little-endian, C order, version 1.0
  const L = rows.length, V = rows[0].length;
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${L}, ${V}), }`;
  header += " ".repeat(63 - ((10 + header.length) % 64)) + "\n";
  const head = Buffer.alloc(10 + header.length);
  head.write("\x93NUMPY", 0, "latin1");
  head[6] = 1, head[7] = 0, head.writeUInt16LE(header.length, 8), head.write(header, 10, "latin1");
  const body = Buffer.alloc(4 * L * V);
  rows.forEach((r, i) => r.forEach((v, j) => body.writeFloatLE(v, 4 * (i * V + j))));
  return Buffer.concat([head, body]);
}

const hub = fs.readFileSync(path.join(ROOT, "tests/ref/hub/cases.txt"), "utf8").split("\n")
    .filter((l) => l.startsWith("gpt2-tiny\t")).map((l) => l.split("\t")[1]);
// tests/gen_llama_ref.py's sentences (tests/ref/llama/*/sN/text.txt)
const modern = [0, 1].map((s) => fs.readFileSync(path.join(ROOT, `tests/ref/llama/llama-gqa2/s${s}/text.txt`), "utf8").trim());
const FILES = [["gpt2-tiny-f32", hub], ["llama-gqa2", modern], ["qwen2-f16", modern], ["qwen3-sharded", modern],
  ["llama3-bf16", modern]];
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
for (const [name, sentences] of FILES) {
  const model = await llama.loadModel({modelPath: path.join(ROOT, `tests/ref/gguf/${name}.gguf`)});
  const V = model.tokens.vocabularySize;
  for (const [s, text] of sentences.entries()) {
    const ctx = await model.createContext({contextSize: 32, batchSize: 32, flashAttention: false,
      experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32"});
    const tokens = model.tokenize(text);
    const opts = {temperature: 1, topK: 0, topP: 1, minP: 0};
    const out = await ctx.getSequence().controlledEvaluate(
        tokens.map((t) => [t, {generateNext: {probabilities: true, options: opts}}]));
    const rows = out.map((o) => {
      const r = new Array(V).fill(0);
      for (const [k, v] of o.next.probabilities) r[k] = v;
      return r;
    });
    const dir = path.join(OUT, name === "gpt2-tiny-f32" ? `s${s}` : `${name}/s${s}`);
    fs.mkdirSync(dir, {recursive: true});
    fs.writeFileSync(path.join(dir, "ids.txt"), tokens.map((t) => `${t}\n`).join(""));
    fs.writeFileSync(path.join(dir, "pred.npy"), npy(rows));
    console.log(`${name} s${s}: ${tokens.length} tokens: ${text}`);
    await ctx.dispose();
  }
  await model.dispose();
}
process.exit(0);
