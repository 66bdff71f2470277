{{/*
The manager's Configuration, from manager.config. Most keys pass through as written (the manager
decodes strictly, so a misspelt key stops it with "invalid configuration: ..."); the chart maps
the short concurrency keys to GroupKinds, fills the names and the namespace it derives, and turns
the manager's own certificate rotation off when cert-manager issues the certificate.
*/}}
{{- define "gantry.config" -}}
{{- $c := deepCopy .Values.manager.config }}
{{- $kinds := dict "trainJob" "TrainJob.trainer.kubeflow.org" "trainingRuntime" "TrainingRuntime.trainer.kubeflow.org" "clusterTrainingRuntime" "ClusterTrainingRuntime.trainer.kubeflow.org" }}
{{- $concurrency := dict }}
{{- range $k, $v := (dig "groupKindConcurrency" dict ($c.controller | default dict)) }}
{{- if not (kindIs "invalid" $v) }}
{{- $_ := set $concurrency (get $kinds $k | default $k) $v }}
{{- end }}
{{- end }}
{{- $_ := set $c "controller" (dict "groupKindConcurrency" $concurrency) }}
{{- $cert := $c.certManagement | default dict }}
{{- $_ := set $cert "enable" (eq (include "gantry.certRotation" .) "true") }}
{{- $_ := set $cert "webhookServiceName" (include "gantry.serviceName" .) }}
{{- $_ := set $cert "webhookSecretName" (include "gantry.webhookSecretName" .) }}
{{- $_ := set $c "certManagement" $cert }}
{{- $le := $c.leaderElection | default dict }}
{{- if not $le.resourceNamespace }}
{{- $_ := set $le "resourceNamespace" .Release.Namespace }}
{{- end }}
{{- $_ := set $c "leaderElection" $le }}
{{- range $k := list "featureGates" "tls" }}
{{- if empty (get $c $k) }}
{{- $_ := unset $c $k }}
{{- end }}
{{- end }}
{{- $cfg := merge (dict "apiVersion" "config.trainer.kubeflow.org/v1alpha1" "kind" "Configuration") $c }}
{{- toYaml $cfg }}
{{- end }}
