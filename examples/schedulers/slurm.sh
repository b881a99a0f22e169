#!/bin/bash
# A sharded scoregate run on SLURM: a job array of shards on a shared file system, then a merge job.
# Submit from the project directory:  sbatch slurm.sh   (it submits the merge job itself, after the array)
#SBATCH --job-name=scoregate-shards
#SBATCH --array=0-3
#SBATCH --time=06:00:00
#SBATCH --gres=gpu:1
#SBATCH --output=logs/shard-%a.out
set -euo pipefail

RUN_ID="${RUN_ID:-smoke-${SLURM_ARRAY_JOB_ID}}"

if [ "${SLURM_ARRAY_TASK_ID}" = "${SLURM_ARRAY_TASK_MIN}" ]; then
  # the merge waits for every shard to end, finished or not (afterany): missing items make it INCOMPLETE
  sbatch --dependency="afterany:${SLURM_ARRAY_JOB_ID}" --job-name=scoregate-merge --output=logs/merge.out \
    --wrap "scoregate merge ${RUN_ID} --fail-on-gates"
fi

# SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT give the shard; one local model server per GPU
scoregate run smoke --shard auto --run-id "${RUN_ID}"
