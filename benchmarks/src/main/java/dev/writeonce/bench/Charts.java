package dev.writeonce.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.imageio.ImageIO;

/**
 * Line charts as PNG, drawn with Java2D (headless): one line per series, a logarithmic x axis for
 * file counts, a linear y axis from zero. Enough for benchmark figures, without a charting library
 * on the command's class path.
 */
final class Charts {

  private static final int WIDTH = 960;
  private static final int HEIGHT = 540;
  private static final int LEFT = 80;
  private static final int RIGHT = 330;
  private static final int TOP = 50;
  private static final int BOTTOM = 60;
  private static final Color[] COLORS = {
    new Color(0xd62728),
    new Color(0xff7f0e),
    new Color(0x8c564b),
    new Color(0x1f77b4),
    new Color(0x2ca02c),
    new Color(0x9467bd),
    new Color(0x7f7f7f)
  };

  /** One point of a series. */
  record Point(double x, double y) {}

  private final String title;
  private final String xLabel;
  private final String yLabel;
  private final Map<String, List<Point>> series = new LinkedHashMap<>();

  Charts(String title, String xLabel, String yLabel) {
    this.title = title;
    this.xLabel = xLabel;
    this.yLabel = yLabel;
  }

  /** Adds a point to a series, creating the series on first use (legend order). */
  Charts add(String name, double x, double y) {
    series.computeIfAbsent(name, any -> new ArrayList<>()).add(new Point(x, y));
    return this;
  }

  void writePng(Path file) throws IOException {
    System.setProperty("java.awt.headless", "true");
    BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    try {
      draw(g);
    } finally {
      g.dispose();
    }
    ImageIO.write(image, "png", file.toFile());
  }

  /** Where the plot lies and what its axes span. */
  private record Frame(double logMin, double logMax, double yTop, int plotW, int plotH) {
    int x(double value) {
      return LEFT + (int) Math.round(plotW * (Math.log10(value) - logMin) / (logMax - logMin));
    }

    int y(double value) {
      return TOP + plotH - (int) Math.round(plotH * value / yTop);
    }
  }

  private void draw(Graphics2D g) {
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setRenderingHint(
        RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, WIDTH, HEIGHT);
    if (series.isEmpty()) {
      return;
    }
    Frame frame = frame();
    drawAxes(g, frame);
    drawSeries(g, frame);
  }

  private Frame frame() {
    double minX = Double.MAX_VALUE;
    double maxX = Double.MIN_VALUE;
    double maxY = 0;
    for (List<Point> points : series.values()) {
      for (Point p : points) {
        minX = Math.min(minX, p.x());
        maxX = Math.max(maxX, p.x());
        maxY = Math.max(maxY, p.y());
      }
    }
    double logMin = Math.floor(Math.log10(minX));
    double logMax = Math.ceil(Math.log10(maxX));
    if (logMax == logMin) {
      logMax = logMin + 1;
    }
    double yTop = niceCeiling(maxY);
    int plotW = WIDTH - LEFT - RIGHT;
    int plotH = HEIGHT - TOP - BOTTOM;

    return new Frame(logMin, logMax, yTop, plotW, plotH);
  }

  private void drawAxes(Graphics2D g, Frame frame) {
    double logMin = frame.logMin();
    double logMax = frame.logMax();
    double yTop = frame.yTop();
    int plotW = frame.plotW();
    int plotH = frame.plotH();
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
    g.setColor(Color.BLACK);
    g.drawString(title, LEFT, TOP - 20);

    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    FontMetrics metrics = g.getFontMetrics();
    // Grid and axes.
    for (int i = 0; i <= 5; i++) {
      double value = yTop * i / 5;
      int y = TOP + plotH - (int) Math.round(plotH * i / 5.0);
      g.setColor(new Color(0xe0e0e0));
      g.drawLine(LEFT, y, LEFT + plotW, y);
      g.setColor(Color.DARK_GRAY);
      String label = format(value);
      g.drawString(label, LEFT - 8 - metrics.stringWidth(label), y + 4);
    }
    for (double e = logMin; e <= logMax; e++) {
      int x = LEFT + (int) Math.round(plotW * (e - logMin) / (logMax - logMin));
      g.setColor(new Color(0xe0e0e0));
      g.drawLine(x, TOP, x, TOP + plotH);
      g.setColor(Color.DARK_GRAY);
      String label = String.format(Locale.ROOT, "%,d", (long) Math.pow(10, e));
      g.drawString(label, x - metrics.stringWidth(label) / 2, TOP + plotH + 18);
    }
    g.setColor(Color.BLACK);
    g.drawRect(LEFT, TOP, plotW, plotH);
    g.drawString(xLabel, LEFT + plotW / 2 - metrics.stringWidth(xLabel) / 2, HEIGHT - 18);
    Graphics2D rotated = (Graphics2D) g.create();
    rotated.rotate(-Math.PI / 2);
    rotated.drawString(yLabel, -(TOP + plotH / 2 + metrics.stringWidth(yLabel) / 2), 20);
    rotated.dispose();
  }

  private void drawSeries(Graphics2D g, Frame frame) {
    int plotW = frame.plotW();
    // Series and legend.
    int index = 0;
    for (Map.Entry<String, List<Point>> entry : series.entrySet()) {
      Color color = COLORS[index % COLORS.length];
      g.setColor(color);
      g.setStroke(new BasicStroke(2.5f));
      int[] previous = null;
      for (Point p : entry.getValue()) {
        int x = frame.x(p.x());
        int y = frame.y(p.y());
        g.fillOval(x - 4, y - 4, 8, 8);
        if (previous != null) {
          g.drawLine(previous[0], previous[1], x, y);
        }
        previous = new int[] {x, y};
      }
      int legendY = TOP + 10 + index * 22;
      g.drawLine(LEFT + plotW + 15, legendY, LEFT + plotW + 40, legendY);
      g.setColor(Color.BLACK);
      g.drawString(entry.getKey(), LEFT + plotW + 46, legendY + 4);
      index++;
    }
  }

  private static double niceCeiling(double value) {
    if (value <= 0) {
      return 1;
    }
    double magnitude = Math.pow(10, Math.floor(Math.log10(value)));
    for (double step : new double[] {1, 2, 2.5, 5, 10}) {
      if (step * magnitude >= value) {
        return step * magnitude;
      }
    }
    return 10 * magnitude;
  }

  private static String format(double value) {
    return value == Math.rint(value) && (Math.abs(value) >= 1 || value == 0)
        ? String.format(Locale.ROOT, "%,d", (long) value)
        : String.format(Locale.ROOT, "%.2f", value);
  }
}
