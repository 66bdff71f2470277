{{/*
Names. Objects keep Kubeflow Trainer's names (prefix `kubeflow-trainer`) unless fullnameOverride
says otherwise: the Python SDK, the shipped Configuration and the manager's defaults use them.
The webhook configurations (defaulter/validator.trainer.kubeflow.org), whose names the manager's
certificate rotator looks up, and the public ConfigMap the SDK reads are never renamed.
*/}}
{{- define "gantry.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "gantry.prefix" -}}
{{- default "kubeflow-trainer" .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- end }}

{{- define "gantry.managerName" -}}
{{- include "gantry.prefix" . }}-controller-manager
{{- end }}

{{- define "gantry.configMapName" -}}
{{- include "gantry.prefix" . }}-config
{{- end }}

{{/* The Service both the webhooks and the status server are reached through. */}}
{{- define "gantry.serviceName" -}}
{{- default (include "gantry.managerName" .) .Values.manager.config.certManagement.webhookServiceName }}
{{- end }}

{{- define "gantry.webhookSecretName" -}}
{{- default (printf "%s-webhook-cert" (include "gantry.prefix" .)) .Values.manager.config.certManagement.webhookSecretName }}
{{- end }}

{{/* The web UI's Deployment, Service, ServiceAccount and ClusterRole (ui.enabled). */}}
{{- define "gantry.uiName" -}}
{{- include "gantry.prefix" . }}-ui
{{- end }}

{{- define "gantry.installerName" -}}
{{- include "gantry.prefix" . }}-runtime-installer
{{- end }}

{{- define "gantry.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.registry }}
{{- printf "%s/%s:%s" .Values.image.registry .Values.image.repository $tag }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/*
Labels of every object: the recommended app.kubernetes.io set plus commonLabels, which may add
labels but not replace the chart's own. gantry.labels takes the root context;
gantry.componentLabels takes (dict "root" . "component" "manager").
*/}}
{{- define "gantry.labels" -}}
{{- include "gantry.componentLabels" (dict "root" . "component" "") }}
{{- end }}

{{- define "gantry.componentLabels" -}}
{{- $ := .root }}
{{- $own := dict
  "helm.sh/chart" (printf "%s-%s" $.Chart.Name $.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-")
  "app.kubernetes.io/managed-by" $.Release.Service
  "app.kubernetes.io/part-of" "gantry"
  "app.kubernetes.io/version" $.Chart.AppVersion }}
{{- $_ := merge $own (fromYaml (include "gantry.selectorLabels" $)) }}
{{- with .component }}
{{- $_ := set $own "app.kubernetes.io/component" . }}
{{- end }}
{{- toYaml (merge $own (deepCopy ($.Values.commonLabels | default dict))) }}
{{- end }}

{{- define "gantry.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gantry.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "gantry.managerSelectorLabels" -}}
{{ include "gantry.selectorLabels" . }}
app.kubernetes.io/component: manager
{{- end }}

{{- define "gantry.uiSelectorLabels" -}}
{{ include "gantry.selectorLabels" . }}
app.kubernetes.io/component: ui
{{- end }}

{{/* port returns the port of a ":8443" or "host:8443" bind address, "" for "0" or no port. */}}
{{- define "gantry.port" -}}
{{- if and . (ne . "0") (contains ":" .) }}
{{- $p := regexReplaceAll "^.*:" . "" }}
{{- if not (regexMatch "^[0-9]+$" $p) }}
{{- fail (printf "bind address %q has no numeric port" .) }}
{{- end }}
{{- $p }}
{{- end }}
{{- end }}

{{- define "gantry.metricsPort" -}}
{{- include "gantry.port" .Values.manager.config.metrics.bindAddress }}
{{- end }}

{{- define "gantry.healthPort" -}}
{{- $p := include "gantry.port" .Values.manager.config.health.healthProbeBindAddress }}
{{- if not $p }}
{{- fail "manager.config.health.healthProbeBindAddress must name a port: the probes use it" }}
{{- end }}
{{- $p }}
{{- end }}

{{/*
certRotation is "true" when the manager issues and rotates the webhook certificate itself: its
certManagement is on and cert-manager does not issue the certificate instead. It decides the
Configuration's certManagement.enable, the placeholder Secret and the RBAC the rotator needs.
*/}}
{{- define "gantry.certRotation" -}}
{{- if and .Values.manager.config.certManagement.enable (not .Values.certManager.enabled) }}true{{ end }}
{{- end }}

{{- define "gantry.certificateName" -}}
{{- include "gantry.prefix" . }}-webhook-cert
{{- end }}
