// The Debian packages Locus reads with when they are there: pocketsphinx and its English model
// (recordings, offline), ffmpeg (recordings and videos: Debian's build gets security fixes, and is
// the one CI and the Docker image read with; without it the npm package's 2018 build is used), Poppler's tools (text PDFs, faster than pdf.js) and the tesseract command
// (OCR, faster than tesseract.js), and LibreOffice without its desktop (office documents, which it
// converts to PDF). Locus starts without them; recordings then fail with speech_engine_unavailable,
// office documents with converter_unavailable. Run by `pnpm install` (postinstall) and by hand (`pnpm system-packages`):
// where apt-get can install (as root, or with sudo that asks no password) it installs what is
// missing and says so; elsewhere it prints the command to run. Never fails the install.
// LOCUS_SKIP_SYSTEM_PACKAGES=1 skips it (the Docker image's build stage, which installs its own).

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const WANTED = [
  {
    pkg: "pocketsphinx",
    present: () => onPath("pocketsphinx_continuous") || onPath("pocketsphinx"),
    for: "recordings",
  },
  {
    pkg: "pocketsphinx-en-us",
    present: () => existsSync("/usr/share/pocketsphinx/model/en-us/en-us.lm.bin"),
    for: "recordings",
  },
  { pkg: "ffmpeg", present: () => existsSync("/usr/bin/ffmpeg"), for: "recordings and videos" },
  { pkg: "poppler-utils", present: () => onPath("pdftotext"), for: "faster text PDFs" },
  { pkg: "tesseract-ocr", present: () => onPath("tesseract"), for: "faster OCR" },
  // The same parts as .ci/packages.sh and the Docker image: the core and its three applications.
  ...[
    ["libreoffice-core-nogui", "soffice.bin"],
    ["libreoffice-writer-nogui", "libswlo.so"],
    ["libreoffice-calc-nogui", "libsclo.so"],
    ["libreoffice-impress-nogui", "libsdlo.so"],
  ].map(([pkg, file]) => ({
    pkg,
    present: () => existsSync(`/usr/lib/libreoffice/program/${file}`),
    for: "office documents",
  })),
  // The sandbox each conversion runs in: it sees /usr and its own folder, not the data folder.
  { pkg: "bubblewrap", present: () => onPath("bwrap"), for: "office documents" },
];

function onPath(command) {
  return spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
}

const say = (line) => process.stdout.write(`system packages: ${line}\n`);

function main() {
  if (process.env.LOCUS_SKIP_SYSTEM_PACKAGES === "1") return;
  const missing = WANTED.filter((w) => !w.present());
  if (missing.length === 0) {
    say(`${WANTED.map((w) => w.pkg).join(", ")} are installed`);
    return;
  }
  const names = missing.map((w) => w.pkg);
  const why = [...new Set(missing.map((w) => w.for))].join(", ");
  if (!onPath("apt-get")) {
    say(
      `${names.join(", ")} missing (for ${why}); not a Debian or Ubuntu machine: install their equivalents by hand`,
    );
    return;
  }
  const root = process.getuid?.() === 0;
  const sudo = !root && onPath("sudo") && spawnSync("sudo", ["-n", "true"], { stdio: "ignore" }).status === 0;
  const command = `apt-get install -y ${names.join(" ")}`;
  if (!root && !sudo) {
    say(
      `${names.join(", ")} missing (for ${why}); install them with: sudo apt-get update && sudo ${command}`,
    );
    return;
  }
  say(`installing ${names.join(", ")} (for ${why}) with apt-get`);
  const run = (args) =>
    execFileSync(root ? args[0] : "sudo", root ? args.slice(1) : ["-n", ...args], {
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  try {
    run(["apt-get", "update", "-q"]);
    run(["apt-get", "install", "-y", "-q", "--no-install-recommends", ...names]);
    say(`installed ${names.join(", ")}`);
  } catch (err) {
    say(`apt-get could not install them (${err.message.split("\n")[0]}); install them with: sudo ${command}`);
  }
}

main();
