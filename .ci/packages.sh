#!/usr/bin/env bash
# Debian packages Locus itself runs with (not only its tests): the offline speech recogniser and
# its English model, ffmpeg (maintained, with security fixes; preferred to the npm package's),
# Poppler's tools (text PDFs, LOCUS_PDF_ENGINE) and the tesseract command (OCR, LOCUS_OCR_ENGINE;
# its English data is also what the OCR benchmark's native side reads with). And what only the
# tests use: flite, the speech synthesiser they make speech with, Chromium, the browser the
# dashboard's end-to-end tests drive (through playwright-core; no browser is downloaded), and
# Prometheus, which split.e2e runs against the split stack (its promtool checks the alerts too).
# LibreOffice without its desktop parts (core, Writer, Calc, Impress): office documents are
# converted to PDF by it before they are read (LOCUS_SOFFICE_PATH), each in bubblewrap's sandbox.
# Installed only when missing.
set -euo pipefail

need_install=()
command -v pocketsphinx_continuous >/dev/null 2>&1 || need_install+=(pocketsphinx)
[ -f /usr/share/pocketsphinx/model/en-us/en-us.lm.bin ] || need_install+=(pocketsphinx-en-us)
[ -x /usr/bin/ffmpeg ] || need_install+=(ffmpeg)
command -v pdftotext >/dev/null 2>&1 || need_install+=(poppler-utils)
command -v tesseract >/dev/null 2>&1 || need_install+=(tesseract-ocr)
command -v flite >/dev/null 2>&1 || need_install+=(flite)
[ -x /usr/bin/chromium ] || need_install+=(chromium)
command -v prometheus >/dev/null 2>&1 || need_install+=(prometheus)
[ -x /usr/lib/libreoffice/program/soffice.bin ] || need_install+=(libreoffice-core-nogui)
[ -f /usr/lib/libreoffice/program/libswlo.so ] || need_install+=(libreoffice-writer-nogui)
[ -f /usr/lib/libreoffice/program/libsclo.so ] || need_install+=(libreoffice-calc-nogui)
[ -f /usr/lib/libreoffice/program/libsdlo.so ] || need_install+=(libreoffice-impress-nogui)
command -v bwrap >/dev/null 2>&1 || need_install+=(bubblewrap)
if [ ${#need_install[@]} -gt 0 ]; then
  echo "installing ${need_install[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_install[@]}"
fi
echo "pocketsphinx, its English model, ffmpeg, poppler-utils, tesseract-ocr, flite, chromium, prometheus, LibreOffice (core, writer, calc, impress) and bubblewrap are installed"
