# A B200 training cluster on Spot that settles for H200 machines, then for H100 Mega machines
# on demand, when the B200 capacity or quota runs out. The GPU pool asks for its nodes at
# create (min_node_count > 0): a create asks only for a pool's static nodes, so only such a
# pool can fail it for capacity and move the chain on. (A pool that starts empty makes its
# nodes when jobs pend; `clusterform status` shows those that do not start.)
#   clusterform plan --var project=my-project

variable "project" {
  type        = string
  description = "Project that owns the cluster"
}

variable "region" {
  type    = string
  default = "us-central1"
}

variable "gpu_nodes" {
  type    = number
  default = 2
}

provider "google" {
  project = var.project
  region  = var.region
  # The stack owns the clusters below: a copy of this directory must change it, or
  # the two copies plan each other's clusters away.
  stack       = "gpu-fallback"
  update_mode = "USER_AND_SERVICE"
}

locals {
  zone = "${var.region}-b"
}

cluster "gputrain" {
  display_name = "GPU training, B200 first"
  labels       = { team = "research" }

  network {
    network    = "projects/${var.project}/global/networks/default"
    subnetwork = "projects/${var.project}/regions/${var.region}/subnetworks/default"
  }

  node_pool "login" {
    machine_spec {
      machine_type = "n2-standard-8"
    }
    scaling_spec {
      min_node_count = 1
      max_node_count = 1
    }
    zone              = local.zone
    enable_public_ips = true
  }

  node_pool "gpu" {
    machine_spec {
      machine_type      = "a4-highgpu-8g"
      accelerator_type  = "NVIDIA_B200"
      accelerator_count = 8
    }
    scaling_spec {
      min_node_count = var.gpu_nodes
      max_node_count = var.gpu_nodes
    }
    provisioning_model = "SPOT"
    zone               = local.zone
    # A4 accepts only hyperdisk-balanced (or no boot disk type at all).
    boot_disk {
      boot_disk_type    = "hyperdisk-balanced"
      boot_disk_size_gb = 500
    }

    # Attempt 2: H200 machines, still on Spot; the rest is the pool's.
    fallback {
      machine_spec {
        machine_type      = "a3-ultragpu-8g"
        accelerator_type  = "NVIDIA_H200_141GB"
        accelerator_count = 8
      }
    }
    # Attempt 3: H100 Mega machines on demand.
    fallback {
      machine_spec {
        machine_type      = "a3-megagpu-8g"
        accelerator_type  = "NVIDIA_H100_MEGA_80GB"
        accelerator_count = 8
      }
      provisioning_model = "ON_DEMAND"
    }
  }

  orchestrator_spec {
    slurm_spec {
      home_directory_storage = "projects/${var.project}/locations/${local.zone}/instances/home"
      login_node_pool_id     = "login"
      partition "gpu" {
        node_pool_ids = ["gpu"]
      }
      prolog_bash_scripts = [file("scripts/prolog.sh")]
      epilog_bash_scripts = [file("scripts/epilog.sh")]
    }
  }
}
