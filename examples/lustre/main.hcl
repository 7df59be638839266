# Pools that mount a Managed Lustre instance, exported every night to Cloud Storage.
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
  stack = "lustre-training"
}

locals {
  zone   = "${var.region}-a"
  lustre = "projects/${var.project}/locations/${local.zone}/instances/scratch"
}

cluster "lustre01" {
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
    zone    = local.zone
    lustres = [local.lustre]
  }

  node_pool "cpu" {
    machine_spec {
      machine_type = "n2-standard-32"
    }
    scaling_spec {
      min_node_count = 0
      max_node_count = 8
    }
    provisioning_model = "SPOT"
    zone               = local.zone
    lustres            = [local.lustre]
  }

  orchestrator_spec {
    slurm_spec {
      home_directory_storage = local.lustre
      login_node_pool_id     = "login"
      partition "cpu" {
        node_pool_ids = ["cpu"]
      }
    }
  }

  lustre_export_config {
    destination_bucket = "${var.project}-lustre-export" # the bucket's name, without gs://
    days_of_week       = ["MONDAY", "THURSDAY"]
    lustres            = [local.lustre]
    start_time {
      hours   = 2
      minutes = 30
    }
  }
}
