// Compile Kaitai schemas with the official compiler (npm kaitai-struct-compiler) to Python.
// usage: node ksc.js OUTDIR SCHEMA.json... (each .ksy already converted to JSON)
const fs = require("fs");
const path = require("path");
const KaitaiStructCompiler = require("kaitai-struct-compiler");

const [outDir, ...files] = process.argv.slice(2);
const specs = {};
for (const f of files) {
  const spec = JSON.parse(fs.readFileSync(f, "utf8"));
  specs[spec.meta.id] = spec;
}
const importer = { importYaml: (name) => Promise.resolve(specs[path.basename(name)]) };
const compiler = typeof KaitaiStructCompiler === "function" ? new KaitaiStructCompiler() : KaitaiStructCompiler;

(async () => {
  for (const spec of Object.values(specs)) {
    const out = await compiler.compile("python", spec, importer, false);
    for (const [name, text] of Object.entries(out)) fs.writeFileSync(path.join(outDir, name), text);
  }
})().catch((e) => {
  console.error(String((e && e.stack) || e));
  process.exit(1);
});
