{{/*
The shipped ClusterTrainingRuntimes are files/runtimes/*.yaml, copies of config/runtimes that
`make manifests` writes. Each file has one toggle under .Values.runtimes (a key path) and the
values key whose `image` overrides its `node` containers' image; runtimes.imageRegistry moves
every shipped image to another registry first. A file without a toggle, or a toggle without a
file, fails the render, so the two cannot drift apart.
*/}}
{{- define "gantry.runtimeToggles" -}}
torch-distributed.yaml: {toggle: torchDistributed, image: torchDistributed}
deepspeed-distributed.yaml: {toggle: deepspeedDistributed, image: deepspeedDistributed}
mlx-distributed.yaml: {toggle: mlxDistributed, image: mlxDistributed}
jax-distributed.yaml: {toggle: jaxDistributed, image: jaxDistributed}
xgboost-distributed.yaml: {toggle: xgboostDistributed, image: xgboostDistributed}
torchtune-llama3.2-1b.yaml: {toggle: torchtuneDistributed.llama3_2_1B, image: torchtuneDistributed}
torchtune-llama3.2-3b.yaml: {toggle: torchtuneDistributed.llama3_2_3B, image: torchtuneDistributed}
torchtune-qwen2.5-1.5b.yaml: {toggle: torchtuneDistributed.qwen2_5_1_5B, image: torchtuneDistributed}
{{- end }}

{{/*
Labels of an installed runtime, by precedence: the installer's ownership labels (it prunes by
gantry.runtimeSelector), the file's own (framework, webhook-validation), runtimes.commonLabels,
then the chart's labels.
*/}}
{{- define "gantry.runtimeLabels" -}}
{{- $own := dict "app.kubernetes.io/managed-by" "gantry-runtime-installer" "app.kubernetes.io/component" "runtime" "app.kubernetes.io/instance" .root.Release.Name }}
{{- toYaml (merge $own (deepCopy (.file | default dict)) (deepCopy (.root.Values.runtimes.commonLabels | default dict)) (fromYaml (include "gantry.labels" .root))) }}
{{- end }}

{{- define "gantry.runtimeSelector" -}}
app.kubernetes.io/instance={{ .Release.Name }},app.kubernetes.io/managed-by=gantry-runtime-installer
{{- end }}

{{/* gantry.enabledRuntimes: a YAML map from file name to the runtime as it is installed. */}}
{{- define "gantry.enabledRuntimes" -}}
{{- $toggles := fromYaml (include "gantry.runtimeToggles" .) }}
{{- $files := .Files.Glob "files/runtimes/*.yaml" }}
{{- range $file, $_ := $toggles }}
{{- if not ($files.Get (printf "files/runtimes/%s" $file)) }}
{{- fail (printf "runtime toggle for %s, but files/runtimes/%s is missing: run make manifests" $file $file) }}
{{- end }}
{{- end }}
{{- $out := dict }}
{{- range $path, $_ := $files }}
{{- $file := base $path }}
{{- $t := get $toggles $file }}
{{- if not $t }}
{{- fail (printf "%s has no toggle in templates/runtimes/_runtimes.tpl" $path) }}
{{- end }}
{{- $v := $.Values.runtimes }}
{{- range $k := splitList "." $t.toggle }}
{{- $v = get $v $k | default dict }}
{{- end }}
{{- $enabled := $.Values.runtimes.defaultEnabled }}
{{- if not (kindIs "invalid" $v.enabled) }}
{{- $enabled = $v.enabled }}
{{- end }}
{{- if $enabled }}
{{- $obj := fromYaml ($.Files.Get $path) }}
{{- $_ := set $obj.metadata "labels" (fromYaml (include "gantry.runtimeLabels" (dict "root" $ "file" $obj.metadata.labels))) }}
{{- with $.Values.runtimes.imageRegistry }}
{{- $registry := . }}
{{- range $rj := $obj.spec.template.spec.replicatedJobs }}
{{- $pod := $rj.template.spec.template.spec }}
{{- range $c := concat ($pod.initContainers | default list) ($pod.containers | default list) }}
{{- $_ := set $c "image" (include "gantry.withRegistry" (dict "image" $c.image "registry" $registry)) }}
{{- end }}
{{- end }}
{{- end }}
{{- with (get $.Values.runtimes $t.image).image }}
{{- $image := . }}
{{- range $rj := $obj.spec.template.spec.replicatedJobs }}
{{- range $c := $rj.template.spec.template.spec.containers }}
{{- if eq $c.name "node" }}
{{- $_ := set $c "image" $image }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- $_ := set $out $file $obj }}
{{- end }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{/*
gantry.withRegistry moves an image reference (dict "image" "registry") to another registry,
keeping its path and tag: ghcr.io/kubeflow/trainer/x:v1 -> <registry>/kubeflow/trainer/x:v1, and
a Docker Hub name, pytorch/pytorch:2 or busybox, to <registry>/pytorch/pytorch:2 or
<registry>/library/busybox, the paths a Docker Hub mirror serves them under.
*/}}
{{- define "gantry.withRegistry" -}}
{{- $parts := splitList "/" .image }}
{{- $first := first $parts }}
{{- $path := .image }}
{{- if eq (len $parts) 1 }}
{{- $path = printf "library/%s" .image }}
{{- else if or (contains "." $first) (contains ":" $first) (eq $first "localhost") }}
{{- $path = rest $parts | join "/" }}
{{- end }}
{{- printf "%s/%s" (trimSuffix "/" .registry) $path }}
{{- end }}

{{/*
gantry.installedRuntimes is "true" when the cluster holds runtimes this release's installer put
there. It asks the API server, so it is always empty under `helm template`; the CRD is looked up
first because a lookup of a kind the API server does not serve fails the whole render.
*/}}
{{- define "gantry.installedRuntimes" -}}
{{- if lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" "clustertrainingruntimes.trainer.kubeflow.org" }}
{{- $found := false }}
{{- range (lookup "trainer.kubeflow.org/v1alpha1" "ClusterTrainingRuntime" "" "").items }}
{{- $l := .metadata.labels | default dict }}
{{- if and (eq (get $l "app.kubernetes.io/instance") $.Release.Name) (eq (get $l "app.kubernetes.io/managed-by") "gantry-runtime-installer") }}
{{- $found = true }}
{{- end }}
{{- end }}
{{- if $found }}true{{ end }}
{{- end }}
{{- end }}

{{/*
The installer runs when a runtime is enabled, and on an upgrade that leaves runtimes it installed
to prune. Otherwise no hook Job exists, so an install or upgrade never waits on one (a hook Job
that cannot pull its image would hold `helm install` until its timeout). The uninstall cleanup
exists when runtimes were enabled.
*/}}
{{- define "gantry.runtimeInstaller" -}}
{{- if ne (include "gantry.enabledRuntimes" .) "{}" }}true
{{- else if and .Release.IsUpgrade (include "gantry.installedRuntimes" .) }}true
{{- end }}
{{- end }}

{{/* The pod spec both installer Jobs share; .args are the gantry arguments. */}}
{{- define "gantry.installerPod" -}}
{{- $ := .root -}}
metadata:
  labels:
    {{- include "gantry.componentLabels" (dict "root" $ "component" "runtime-installer") | nindent 4 }}
spec:
  restartPolicy: Never
  serviceAccountName: {{ include "gantry.installerName" $ }}
  {{- with $.Values.image.pullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $.Values.manager.podSecurityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: installer
      image: {{ include "gantry.image" $ }}
      imagePullPolicy: {{ $.Values.image.pullPolicy }}
      command: [/gantry]
      args:
        {{- toYaml .args | nindent 8 }}
      {{- with $.Values.runtimes.installer.resources }}
      resources:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $.Values.manager.securityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .mounts }}
      volumeMounts:
        {{- toYaml . | nindent 8 }}
      {{- end }}
  {{- with .volumes }}
  volumes:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $.Values.runtimes.installer.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $.Values.runtimes.installer.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $.Values.runtimes.installer.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
