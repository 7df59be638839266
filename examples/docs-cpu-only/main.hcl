# "CPU only cluster" of the product's Create cluster page, as a configuration: a CPU compute
# pool that scales with the queue and a login pool, with a Filestore instance as /home. The
# page's placeholders are the variables below; their defaults let `clusterform plan` run
# offline on the built-in emulator. Its Manage cluster page resizes this cluster's `cpu`
# pool: `clusterform plan --var cpu_max_node_count=8` is that update.

variable "project" {
  type        = string
  default     = "demo-project"
  description = "PROJECT_ID: the project of the cluster and its network"
}

variable "region" {
  type    = string
  default = "us-central1"
}

variable "zone" {
  type        = string
  default     = "us-central1-a"
  description = "ZONE: the zone of the pools and the Filestore instance"
}

variable "display_name" {
  type    = string
  default = "cpuonly"
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

variable "cpu_min_node_count" {
  type    = number
  default = 0
}

variable "cpu_max_node_count" {
  type    = number
  default = 4
}

variable "login_node_count" {
  type        = number
  default     = 1
  description = "Login nodes (the login pool's min and max are equal)"
}

provider "google" {
  project  = var.project
  region   = var.region
  endpoint = "local"
}

locals {
  boot_disk = { type = "pd-standard", size_gb = 120 }
}

cluster "training" {
  display_name = var.display_name

  network {
    network    = "projects/${var.project}/global/networks/${var.network}"
    subnetwork = "projects/${var.project}/regions/${var.region}/subnetworks/${var.subnetwork}"
  }

  node_pool "cpu" {
    machine_spec {
      machine_type = "n2-standard-8"
    }
    scaling_spec {
      min_node_count = var.cpu_min_node_count
      max_node_count = var.cpu_max_node_count
    }
    zone              = var.zone
    enable_public_ips = true
    boot_disk {
      boot_disk_type    = local.boot_disk.type
      boot_disk_size_gb = local.boot_disk.size_gb
    }
  }

  node_pool "login" {
    machine_spec {
      machine_type = "n2-standard-8"
    }
    scaling_spec {
      min_node_count = var.login_node_count
      max_node_count = var.login_node_count
    }
    zone              = var.zone
    enable_public_ips = true
    boot_disk {
      boot_disk_type    = local.boot_disk.type
      boot_disk_size_gb = local.boot_disk.size_gb
    }
  }

  orchestrator_spec {
    slurm_spec {
      home_directory_storage = "projects/${var.project}/locations/${var.zone}/instances/${var.filestore}"
      partition "cpu" {
        node_pool_ids = ["cpu"]
      }
      login_node_pool_id = "login"
    }
  }
}
