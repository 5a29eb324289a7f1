# SPDX-License-Identifier: Apache-2.0
"""``python -m flagprism ...`` runs the same command-line tool as ``flagprism ...``."""

from flagprism.cli import main

main()
