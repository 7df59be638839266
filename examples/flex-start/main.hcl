# GPU nodes obtained with Dynamic Workload Scheduler's flex-start: capacity is requested
# when jobs need it and released after at most flex_start_max_duration.
#   clusterform plan --var project=my-project

variable "project" {
  type = string
}

variable "region" {
  type    = string
  default = "us-central1"
}

provider "google" {
  project = var.project
  region  = var.region
  # The stack owns the clusters below: a copy of this directory must change it, or
  # the two copies plan each other's clusters away.
  stack = "flex-start"
}

cluster "flex01" {
  network {
    network = "projects/${var.project}/global/networks/default"
  }

  node_pool "login" {
    machine_spec {
      machine_type = "n2-standard-8"
    }
    scaling_spec {
      min_node_count = 1
      max_node_count = 1
    }
    zone = "${var.region}-a"
  }

  node_pool "h100" {
    machine_spec {
      machine_type      = "a3-megagpu-8g"
      accelerator_type  = "NVIDIA_H100_MEGA_80GB"
      accelerator_count = 8
    }
    scaling_spec {
      min_node_count = 0
      max_node_count = 4
    }
    provisioning_model      = "FLEX_START"
    flex_start_max_duration = "7d"
    zone                    = "${var.region}-a"
  }

  orchestrator_spec {
    slurm_spec {
      home_directory_storage = "projects/${var.project}/locations/${var.region}-a/instances/home"
      login_node_pool_id     = "login"
      partition "gpu" {
        node_pool_ids = ["h100"]
      }
    }
  }
}
