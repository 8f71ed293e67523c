#!/usr/bin/env bash
# TeX for the results book (`snakemake --cores N book`, `socialbench book`) and its test: pdflatex
# with booktabs, graphicx, float, hyperref and the Times/Courier fonts, and pdftotext. Nothing else
# in the pipeline needs them. Idempotent: installs only what is missing (as root, or with sudo).
set -euo pipefail
PACKAGES=(texlive-latex-base texlive-latex-recommended texlive-fonts-recommended poppler-utils)
missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_tex: ${PACKAGES[*]} already installed"
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "install_tex: apt-get not found; install ${missing[*]} (pdflatex and pdftotext) with this system's package manager" >&2
  exit 1
fi
SUDO=()
[ "$(id -u)" -eq 0 ] || SUDO=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
command -v pdflatex >/dev/null && command -v pdftotext >/dev/null
echo "install_tex: installed ${missing[*]}"
