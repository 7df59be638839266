# "GPU with startup script" of the product's Create cluster page, as a configuration: the
# standard GPU cluster with a script that runs on every node of both pools when it boots.
# Changing a pool's startup_script later recreates that pool's nodes. The page's
# placeholders are the variables below; their defaults let `clusterform plan` run offline on
# the built-in emulator.

variable "project" {
  type        = string
  default     = "demo-project"
  description = "PROJECT_ID: the project of the cluster, its network and its reservation"
}

variable "region" {
  type    = string
  default = "us-central1"
}

variable "zone" {
  type        = string
  default     = "us-central1-a"
  description = "ZONE: the zone of the pools, the Filestore instance and the reservation"
}

variable "display_name" {
  type    = string
  default = "gpustartup"
}

variable "network" {
  type    = string
  default = "default"
}

variable "subnetwork" {
  type    = string
  default = "default"
}

variable "filestore" {
  type        = string
  default     = "home"
  description = "FILESTORE: the Filestore instance mounted as /home"
}

variable "reservation" {
  type        = string
  default     = "a4-reservation"
  description = "RESERVATION_NAME: the A4 reservation in var.zone"
}

variable "login_node_count" {
  type        = number
  default     = 1
  description = "Login nodes (the login pool's min and max are equal)"
}

variable "gpu_node_count" {
  type        = number
  default     = 2
  description = "A4 nodes: a reservation's pool has min = max"
}

provider "google" {
  project  = var.project
  region   = var.region
  endpoint = "local"
}

locals {
  startup_script = "#Example script\nsudo mkdir -p /data\necho 'Script Finished'\n"
}

cluster "training" {
  display_name = var.display_name

  network {
    network    = "projects/${var.project}/global/networks/${var.network}"
    subnetwork = "projects/${var.project}/regions/${var.region}/subnetworks/${var.subnetwork}"
  }

  node_pool "login" {
    machine_spec {
      machine_type = "n2-standard-8"
    }
    scaling_spec {
      min_node_count = var.login_node_count
      max_node_count = var.login_node_count
    }
    enable_public_ips = true
    zone              = var.zone
    boot_disk {
      boot_disk_type    = "pd-standard"
      boot_disk_size_gb = 200
    }
    startup_script = local.startup_script
  }

  node_pool "a4" {
    machine_spec {
      machine_type      = "a4-highgpu-8g"
      accelerator_type  = "NVIDIA_B200"
      accelerator_count = 8
      reservation_affinity {
        # The only value the service supports.
        reservation_affinity_type = "SPECIFIC_RESERVATION"
        key                       = "compute.googleapis.com/reservation-name"
        values                    = ["projects/${var.project}/zones/${var.zone}/reservations/${var.reservation}"]
      }
    }
    # The page leaves this a placeholder; a pool with a reservation affinity must say
    # RESERVATION.
    provisioning_model = "RESERVATION"
    scaling_spec {
      min_node_count = var.gpu_node_count
      max_node_count = var.gpu_node_count
    }
    enable_public_ips = true
    zone              = var.zone
    # A4 accepts only hyperdisk-balanced (or no boot disk type at all).
    boot_disk {
      boot_disk_type    = "hyperdisk-balanced"
      boot_disk_size_gb = 200
    }
    startup_script = local.startup_script
  }

  orchestrator_spec {
    slurm_spec {
      home_directory_storage = "projects/${var.project}/locations/${var.zone}/instances/${var.filestore}"
      partition "a4" {
        node_pool_ids = ["a4"]
      }
      login_node_pool_id = "login"
    }
  }
}
