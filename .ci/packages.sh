#!/usr/bin/env bash
# Debian packages Locus itself runs with (not only its tests): the offline speech recogniser and
# its English model. And flite, the speech synthesiser the tests make speech with. Installed only
# when missing.
set -euo pipefail

need_install=()
command -v pocketsphinx_continuous >/dev/null 2>&1 || need_install+=(pocketsphinx)
[ -f /usr/share/pocketsphinx/model/en-us/en-us.lm.bin ] || need_install+=(pocketsphinx-en-us)
command -v flite >/dev/null 2>&1 || need_install+=(flite)
if [ ${#need_install[@]} -gt 0 ]; then
  echo "installing ${need_install[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_install[@]}"
fi
echo "pocketsphinx, its English model and flite are installed"
