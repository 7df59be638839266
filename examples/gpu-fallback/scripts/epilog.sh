#!/bin/bash
# Runs after every job: clean the job's scratch space.
rm -rf "/scratch/${SLURM_JOB_ID:?}"
