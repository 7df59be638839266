#!/bin/bash
# Runs before every job: make sure the GPUs are healthy.
nvidia-smi --query-gpu=index,health --format=csv,noheader
