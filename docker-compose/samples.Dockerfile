# syntax=docker/dockerfile:1
# The demo's sample services, one image per target, all built by one Maven run from this repository:
#   dubbo-greeter   Dubbo 3 provider (Triple on 50051), registered where REGISTRY_ADDRESS says
#   spring-hello    Spring Cloud web service (8080), registered in Eureka or Consul by its Spring profile
#   eureka-server   a standalone Spring Cloud Netflix Eureka server (8761)
# From the repository root:  docker build -f docker-compose/samples.Dockerfile --target dubbo-greeter .

FROM eclipse-temurin:21-jdk AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,id=meshbridge-m2,target=/root/.m2,sharing=locked \
    ./mvnw -B -ntp -pl samples/dubbo-greeter,samples/spring-cloud/hello-service,samples/spring-cloud/eureka-server \
       -am package -DskipTests -Dspotless.skip=true

FROM eclipse-temurin:21-jre AS runtime
# A home of its own: Dubbo and nacos-client keep small caches under ~/.dubbo and ~/nacos.
RUN groupadd --system --gid 10001 sample \
    && useradd --system --uid 10001 --gid sample --create-home --home-dir /home/sample --shell /usr/sbin/nologin sample
WORKDIR /opt/sample
USER 10001:10001

FROM runtime AS dubbo-greeter
COPY --from=build /src/samples/dubbo-greeter/target/lib /opt/sample/lib
COPY --from=build /src/samples/dubbo-greeter/target/sample-dubbo-greeter.jar /opt/sample/
EXPOSE 50051
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=75", "-jar", "/opt/sample/sample-dubbo-greeter.jar"]

FROM runtime AS spring-hello
COPY --from=build /src/samples/spring-cloud/hello-service/target/sample-spring-hello.jar /opt/sample/
EXPOSE 8080
HEALTHCHECK --interval=5s --timeout=3s --start-period=30s --retries=3 \
    CMD curl -fsS -o /dev/null http://127.0.0.1:8080/actuator/health || exit 1
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=75", "-jar", "/opt/sample/sample-spring-hello.jar"]

FROM runtime AS eureka-server
COPY --from=build /src/samples/spring-cloud/eureka-server/target/sample-eureka-server.jar /opt/sample/
EXPOSE 8761
HEALTHCHECK --interval=5s --timeout=3s --start-period=30s --retries=3 \
    CMD curl -fsS -o /dev/null http://127.0.0.1:8761/eureka/apps || exit 1
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=75", "-jar", "/opt/sample/sample-eureka-server.jar"]
