# SPDX-License-Identifier: Apache-2.0
"""Kernels the Debugger tests instrument; they live in real files because Triton reads sources."""
