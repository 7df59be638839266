# An A4 (NVIDIA B200) training cluster on a specific reservation, with a CPU login pool,
# two partitions, and prolog/epilog scripts kept next to the configuration.
#   clusterform plan --var project=my-project --var reservation=my-a4-reservation

variable "project" {
  type        = string
  description = "Project that owns the cluster and the reservation"
}

variable "region" {
  type    = string
  default = "us-central1"
}

variable "reservation" {
  type        = string
  description = "Name of the A4 reservation (in the pools' zone) the GPU nodes consume"
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
  stack       = "gpu-a4"
  update_mode = "USER_AND_SERVICE"
}

locals {
  zone = "${var.region}-b"
}

cluster "a4train" {
  display_name = "A4 training"
  labels       = { team = "research", accelerator = "b200" }

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

  node_pool "a4" {
    machine_spec {
      machine_type      = "a4-highgpu-8g"
      accelerator_type  = "NVIDIA_B200"
      accelerator_count = 8
      # The service takes only SPECIFIC_RESERVATION, and the reservation's full name.
      reservation_affinity {
        reservation_affinity_type = "SPECIFIC_RESERVATION"
        key                       = "compute.googleapis.com/reservation-name"
        values                    = ["projects/${var.project}/zones/${local.zone}/reservations/${var.reservation}"]
      }
    }
    # A reservation's nodes are all taken at once: min = max.
    scaling_spec {
      min_node_count = var.gpu_nodes
      max_node_count = var.gpu_nodes
    }
    provisioning_model = "RESERVATION"
    zone               = local.zone
    # A4 accepts only hyperdisk-balanced (or no boot disk type at all).
    boot_disk {
      boot_disk_type    = "hyperdisk-balanced"
      boot_disk_size_gb = 500
    }
  }

  orchestrator_spec {
    slurm_spec {
      home_directory_storage = "projects/${var.project}/locations/${local.zone}/instances/home"
      login_node_pool_id     = "login"
      partition "gpu" {
        node_pool_ids = ["a4"]
      }
      partition "debug" {
        node_pool_ids = ["a4"]
        config        = { MaxTime = "01:00:00" }
      }
      default_partition_id = "gpu"
      prolog_bash_scripts  = [file("scripts/prolog.sh")]
      epilog_bash_scripts  = [file("scripts/epilog.sh")]
    }
  }

  lifecycle {
    prevent_destroy = true
  }
}
