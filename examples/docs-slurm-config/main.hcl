# "Advanced Slurm configuration" of the product's Create cluster page, as a configuration:
# the CPU-only cluster with slurm.conf parameters set by name in the three maps (cluster-wide
# `config`, the partition's `config`, and the `cpu` pool's node set), and prolog and epilog
# scripts. Values are slurm.conf text, so numbers are strings. The page's placeholders are
# the variables below; their defaults let `clusterform plan` run offline on the built-in
# emulator.

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
  default = "slurmcfg"
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

      # Cluster-wide: multifactor priority, partition-priority preemption, backfill tuning
      # (a bare term such as bf_continue turns a flag on) and enforced accounting limits.
      config = {
        PriorityType             = "priority/multifactor"
        PriorityWeightAge        = "1000"
        PriorityWeightFairshare  = "10000"
        PreemptType              = "preempt/partition_prio"
        PreemptMode              = "SUSPEND,GANG"
        SchedulerParameters      = "bf_continue,bf_window=1440,bf_resolution=600"
        AccountingStorageEnforce = "limits,qos"
      }

      prolog_bash_scripts = ["#!/bin/bash\necho 'Prolog script running'"]
      epilog_bash_scripts = ["#!/bin/bash\necho 'Epilog script running'"]

      # Extra pairs on the partition's PartitionName= line: a 4-day runtime bound and a
      # default memory per CPU for this partition only.
      partition "cpu" {
        node_pool_ids = ["cpu"]
        config        = {
          MaxTime      = "4-00:00:00"
          DefMemPerCPU = "4096"
          PriorityTier = "20"
        }
      }

      # Extra pairs on the NodeName= line of the cpu pool's nodes: jobs can select them with
      # --constraint=spot. A node set names a compute pool, never the login pool.
      node_set "cpu" {
        config = {
          Weight   = "10"
          Features = "cpu,spot"
        }
      }

      login_node_pool_id = "login"
    }
  }
}
