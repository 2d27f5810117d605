{{/* The chart's name in object names and the app.kubernetes.io/name label: nameOverride, as in
     `helm create` charts (an umbrella chart renaming its dependencies sets it). */}}
{{- define "po.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/* The base of every object name: the release name, plus the name unless it is in it. */}}
{{- define "po.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "po.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Labels on every object (the component label is added by each template). */}}
{{- define "po.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 }}
app.kubernetes.io/name: {{ include "po.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: propertyoverride
{{- end -}}

{{/* Selects the controller's pods (Deployment, PDB, Services, anti-affinity). */}}
{{- define "po.selectorLabels" -}}
app.kubernetes.io/name: {{ include "po.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end -}}

{{- define "po.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- printf "%s-controller" (include "po.fullname" .) -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding the webhook's serving certificate (self-managed: also its CA). */}}
{{- define "po.webhookSecretName" -}}
{{- if eq .Values.webhook.certificate.mode "secret" -}}
{{- required "webhook.certificate.secret.name is required in the secret certificate mode" .Values.webhook.certificate.secret.name -}}
{{- else if eq .Values.webhook.certificate.mode "self-managed" -}}
{{- printf "%s-webhook-cert" (include "po.fullname" .) -}}
{{- else -}}
{{- printf "%s-webhook-tls" (include "po.fullname" .) -}}
{{- end -}}
{{- end -}}
