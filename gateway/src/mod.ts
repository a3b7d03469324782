/** The gateway: HTTP and HTTPS in front of the services, routing each request over the bus. */
export { createGatewayApp, type GatewayApp, type GatewayAppDeps } from './app.ts';
export { startGateway, type GatewayDeps, type RunningGateway } from './server.ts';
export { readGatewayConfig, type GatewayConfig } from './config.ts';
export { busAuthView, staticAuthView, type AuthView } from './auth/auth_view.ts';
export { gatewayDefinition } from './definition.ts';
