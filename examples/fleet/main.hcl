# One cluster per team, stamped out with for_each. Each instance's cluster ID is its key
# (set `id = ...` to derive another one from each.key).
#   clusterform plan --var project=my-project

variable "project" {
  type = string
}

variable "region" {
  type    = string
  default = "us-central1"
}

variable "teams" {
  type    = map(number)
  default = {
    vision = 4
    speech = 2
    nlp    = 8
  }
  description = "Team name => largest number of CPU nodes"
}

provider "google" {
  project = var.project
  region  = var.region
  # The stack owns the clusters below: a copy of this directory must change it, or
  # the two copies plan each other's clusters away.
  stack = "fleet"
}

cluster "team" {
  for_each = var.teams

  display_name = "Cluster of team ${each.key}"
  labels       = { team = each.key }

  network {
    network = "projects/${var.project}/global/networks/default"
  }

  node_pool "login" {
    machine_spec {
      machine_type = "n2-standard-4"
    }
    scaling_spec {
      min_node_count = 1
      max_node_count = 1
    }
    zone = "${var.region}-a"
  }

  node_pool "cpu" {
    machine_spec {
      machine_type = "n2-standard-8"
    }
    scaling_spec {
      min_node_count = 0
      max_node_count = each.value
    }
    zone = "${var.region}-a"
  }

  orchestrator_spec {
    slurm_spec {
      home_directory_storage = "projects/${var.project}/locations/${var.region}-a/instances/${each.key}-home"
      login_node_pool_id     = "login"
      partition "cpu" {
        node_pool_ids = ["cpu"]
      }
    }
  }
}
