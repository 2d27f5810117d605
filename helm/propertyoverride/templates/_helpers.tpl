{{/* The chart's name in object names and the app.kubernetes.io/name label: nameOverride, as in
     `helm create` charts (an umbrella chart renaming its dependencies sets it). */}}
{{- define "po.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/* The base of every object name: the release name, plus the name unless it is in it. Services
     need DNS-1035 labels, which Helm's release names need not be: a dot becomes "-" (team.a:
     team-a-...), the cut at 40 characters drops every dash it leaves at the end (not one, as
     `trimSuffix "-"` does), and a base that still starts with a digit is refused here, at render
     time, rather than by the API server halfway through an install. */}}
{{- define "po.fullname" -}}
{{- $base := "" -}}
{{- $from := "" -}}
{{- if .Values.fullnameOverride -}}
{{- $base = .Values.fullnameOverride -}}
{{- $from = printf "fullnameOverride %q" .Values.fullnameOverride -}}
{{- else -}}
{{- $name := include "po.name" . -}}
{{- $base = ternary .Release.Name (printf "%s-%s" .Release.Name $name) (contains $name .Release.Name) -}}
{{- $from = printf "release name %q" .Release.Name -}}
{{- end -}}
{{- $full := regexReplaceAll "-+$" ($base | replace "." "-" | trunc 40) "" -}}
{{- if not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $full) -}}
{{- fail (printf "%s gives object names the base %q, which is no DNS-1035 label (a letter first, then letters, digits and '-'): the Services named from it would be refused; set fullnameOverride to a name that starts with a letter" $from $full) -}}
{{- end -}}
{{- $full -}}
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
