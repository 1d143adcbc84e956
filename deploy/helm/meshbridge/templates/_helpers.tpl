{{/* The chart's name, and the full name of its objects (release-scoped). */}}
{{- define "meshbridge.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "meshbridge.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The labels that select the pods: the Deployment's selector, the Service's, the PDB's, the spread's. */}}
{{- define "meshbridge.selectorLabels" -}}
app.kubernetes.io/name: {{ include "meshbridge.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "meshbridge.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "meshbridge.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: control-plane
app.kubernetes.io/part-of: meshbridge
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "meshbridge.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "meshbridge.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Whether a source reads the Kubernetes API: Ingresses, or Higress's McpBridge. RBAC and the token follow it. */}}
{{- define "meshbridge.kubernetesIngress" -}}
{{- if dig "ingress" "kubernetes" "enabled" false .Values.bridge -}}true{{- end -}}
{{- end -}}
{{- define "meshbridge.mcpBridge" -}}
{{- if dig "ingress" "mcpBridge" "enabled" false .Values.bridge -}}true{{- end -}}
{{- end -}}
{{- define "meshbridge.needsApi" -}}
{{- if or (include "meshbridge.kubernetesIngress" .) (include "meshbridge.mcpBridge" .) -}}true{{- end -}}
{{- end -}}

{{- define "meshbridge.mcpEnabled" -}}
{{- if dig "mcp" "enabled" true .Values.bridge -}}true{{- end -}}
{{- end -}}

{{/* Where the data volume is mounted; bridge.yaml's data.directory. */}}
{{- define "meshbridge.dataDirectory" -}}/var/lib/meshbridge{{- end -}}

{{/*
bridge.yaml: the user's `bridge` value with what the chart owns set over it (the admin server on every address for
the probes, the ports, the data directory on its volume, the drain period).
*/}}
{{- define "meshbridge.bridgeYaml" -}}
{{- $owned := dict
      "admin" (dict "enabled" true "address" "0.0.0.0" "port" .Values.ports.admin)
      "xds" (dict "port" .Values.ports.xds)
      "mcp" (dict "port" .Values.ports.mcp)
      "data" (dict "directory" (include "meshbridge.dataDirectory" .) "writeInterval" .Values.data.writeInterval)
      "shutdown" (dict "drainPeriod" (printf "%ds" (int .Values.drainSeconds))) -}}
{{- toYaml (mustMergeOverwrite (deepCopy .Values.bridge) $owned) -}}
{{- end -}}

{{/* Checks between values that a schema cannot express. */}}
{{- define "meshbridge.validate" -}}
{{- if lt (int .Values.terminationGracePeriodSeconds) (add (int .Values.drainSeconds) 5 | int) -}}
{{- fail (printf "terminationGracePeriodSeconds (%d) must exceed drainSeconds (%d) by at least 5: the pod would be killed while it drains" (int .Values.terminationGracePeriodSeconds) (int .Values.drainSeconds)) -}}
{{- end -}}
{{- $ports := list .Values.ports.xds .Values.ports.mcp .Values.ports.admin -}}
{{- if ne (len (uniq $ports)) 3 -}}
{{- fail (printf "ports.xds, ports.mcp and ports.admin must differ, got %v" $ports) -}}
{{- end -}}
{{- if and .Values.data.persistence.enabled (not .Values.data.persistence.size) -}}
{{- fail "data.persistence.size is required when data.persistence.enabled is true" -}}
{{- end -}}
{{- end -}}
