# The CPU-only cluster of the getting-started guide, on the built-in emulator:
# `clusterform apply` works here without a Google Cloud account.

provider "google" {
  project  = "demo-project"
  region   = "us-central1"
  endpoint = "local"
}

locals {
  zone = "us-central1-a"
}

cluster "train01" {
  display_name = "Quickstart training cluster"
  labels       = { team = "ml" }

  network {
    network    = "projects/demo-project/global/networks/default"
    subnetwork = "projects/demo-project/regions/us-central1/subnetworks/default"
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
      boot_disk_type    = "pd-standard"
      boot_disk_size_gb = 120
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
    zone              = local.zone
    enable_public_ips = true
    boot_disk {
      boot_disk_type    = "pd-standard"
      boot_disk_size_gb = 120
    }
  }

  orchestrator_spec {
    slurm_spec {
      home_directory_storage = "projects/demo-project/locations/us-central1-a/instances/home"
      login_node_pool_id     = "login"
      partition "cpu" {
        node_pool_ids = ["cpu"]
      }
    }
  }
}
