variable "project" {
  type        = string
  description = "Project that owns the cluster"
}

variable "region" {
  type        = string
  default     = "us-central1"
  description = "Region of the cluster"
}

variable "filestore" {
  type        = string
  default     = "home"
  description = "Filestore instance (in the pools' zone) for home directories"
}
