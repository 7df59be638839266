# A CPU-only Slurm cluster in your own project:
#   clusterform plan --var project=my-project

provider "google" {
  project = var.project
  region  = var.region
  # The stack owns the clusters below: a copy of this directory must change it, or
  # the two copies plan each other's clusters away.
  stack = "research-cpu"
}

locals {
  zone       = "${var.region}-a"
  network    = "projects/${var.project}/global/networks/default"
  subnetwork = "projects/${var.project}/regions/${var.region}/subnetworks/default"
  home       = "projects/${var.project}/locations/${local.zone}/instances/${var.filestore}"
  boot_disk  = { type = "pd-standard", size_gb = 120 }
}

cluster "train01" {
  display_name = "CPU training cluster"
  labels       = { team = "ml" }

  network {
    network    = local.network
    subnetwork = local.subnetwork
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
    boot_disk {
      boot_disk_type    = local.boot_disk.type
      boot_disk_size_gb = local.boot_disk.size_gb
    }
  }

  node_pool "cpu" {
    machine_spec {
      machine_type = "n2-standard-8"
    }
    scaling_spec {
      min_node_count = 0
      max_node_count = 4
    }
    zone = local.zone
    boot_disk {
      boot_disk_type    = local.boot_disk.type
      boot_disk_size_gb = local.boot_disk.size_gb
    }
  }

  orchestrator_spec {
    slurm_spec {
      home_directory_storage = local.home
      login_node_pool_id     = "login"
      partition "cpu" {
        node_pool_ids = ["cpu"]
      }
    }
  }

  timeouts {
    create = "90m"
  }
}
