import { describe, expect, it } from "vitest";
import { authenticationClientId, telemetryOff, telemetrySwitches } from "../../src/app/telemetrySwitches";

describe("telemetry switches (the standard OpenTelemetry environment)", () => {
  it("nothing set: nothing started (the cold start loads no SDK)", () => {
    expect(telemetryOff(telemetrySwitches({}))).toBe(true);
  });

  it("APPLICATIONINSIGHTS_CONNECTION_STRING sends every signal to Azure Monitor unless an OTEL_*_EXPORTER says otherwise", () => {
    const s = telemetrySwitches({
      APPLICATIONINSIGHTS_CONNECTION_STRING: "InstrumentationKey=x",
      OTEL_LOGS_EXPORTER: "none",
      OTEL_TRACES_EXPORTER: "console,azuremonitor",
    });
    expect(s).toMatchObject({
      metrics: ["azuremonitor"],
      traces: ["console", "azuremonitor"],
      logs: [],
      metricIntervalMs: 60_000,
      ignored: [],
    });
  });

  it("OTEL_METRICS_EXPORTER=console with OTEL_METRIC_EXPORT_INTERVAL honoured; unknown exporters and bad intervals are named", () => {
    expect(telemetrySwitches({ OTEL_METRICS_EXPORTER: "console", OTEL_METRIC_EXPORT_INTERVAL: "5000" })).toMatchObject({
      metrics: ["console"],
      traces: [],
      metricIntervalMs: 5000,
    });
    expect(telemetrySwitches({ OTEL_TRACES_EXPORTER: "otlp", OTEL_METRIC_EXPORT_INTERVAL: "soon" }).ignored).toEqual([
      "OTEL_METRIC_EXPORT_INTERVAL: soon is not a positive number of milliseconds (60000 used)",
      "OTEL_TRACES_EXPORTER: otlp is not supported here (console, azuremonitor or none)",
    ]);
    expect(telemetrySwitches({ OTEL_METRICS_EXPORTER: "azuremonitor" })).toMatchObject({
      metrics: [],
      ignored: ["metrics: azuremonitor needs APPLICATIONINSIGHTS_CONNECTION_STRING"],
    });
  });

  it("OTEL_SDK_DISABLED=true turns everything off, the connection string included", () => {
    expect(
      telemetryOff(
        telemetrySwitches({
          OTEL_SDK_DISABLED: "true",
          APPLICATIONINSIGHTS_CONNECTION_STRING: "InstrumentationKey=x",
          OTEL_METRICS_EXPORTER: "console",
        }),
      ),
    ).toBe(true);
  });

  it("the managed identity the template names in APPLICATIONINSIGHTS_AUTHENTICATION_STRING", () => {
    expect(
      authenticationClientId({ APPLICATIONINSIGHTS_AUTHENTICATION_STRING: "ClientId=0000-1111;Authorization=AAD" }),
    ).toBe("0000-1111");
    expect(authenticationClientId({})).toBeUndefined();
  });
});
